// For browsers driven without a page API (Firefox, run driverless by
// web/engines.py): with ?report=PATH in the page's URL, POSTs the page's
// result object (window[name]) as JSON to PATH on the test server once its
// `done` is set. Without the parameter it does nothing.
export function reportWhenDone(name) {
  const path = new URLSearchParams(location.search).get("report");
  if (!path) return;
  const timer = setInterval(() => {
    const result = window[name];
    if (!result || !result.done) return;
    clearInterval(timer);
    fetch(path, { method: "POST", headers: { "Content-Type": "application/json" },
                  body: JSON.stringify(result) })
      .catch((err) => console.error(`report: ${err}`));
  }, 300);
}
