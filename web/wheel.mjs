// Where a page finds the samebits Pyodide wheel: ?wheel=URL when given, else
// the wheel that ../wasm/out/wheel.json names (written by bash wasm/build.sh).
// Shared by the hash page, the models page and the benchmark page.

/** The wheel's absolute URL for a page with these query `params`. */
export async function wheelURL(params, base = location.href) {
  if (params.get("wheel")) return new URL(params.get("wheel"), base).href;
  const manifestURL = new URL("../wasm/out/wheel.json", base).href;
  const response = await fetch(manifestURL, { cache: "no-store" });
  if (!response.ok) throw new Error(`${manifestURL}: ${response.status} (run bash wasm/build.sh)`);
  return new URL((await response.json()).wheel, manifestURL).href;
}
