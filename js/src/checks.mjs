// Argument checks: every value is checked here, in JavaScript, before it
// reaches C, and a bad one is a TypeError (wrong kind) or RangeError (wrong
// value) whose message names the function and the argument.

export const MAX_SIZE = 2 ** 40;          // csrc/samebits.h: SB_MAX_SIZE
const MAX_ELEMENTS = 2 ** 30;             // 4 GiB of float32: the most a wasm32 memory holds

export function floats(value, name, what) {
    if (!(value instanceof Float32Array)) {
        const kind = value === null ? "null" : value?.constructor?.name ?? typeof value;
        const hint = ArrayBuffer.isView(value) || Array.isArray(value) ?
            " (convert with Float32Array.from(...))" : "";
        throw new TypeError(`${what}: ${name} must be a Float32Array, got ${kind}${hint}`);
    }
    return value;
}

export function floatsOfLength(value, length, name, what, shapeText) {
    floats(value, name, what);
    if (value.length !== length) {
        const of = shapeText ? ` for shape ${shapeText}` : "";
        throw new RangeError(`${what}: ${name} must hold ${length} floats${of}, got ${value.length}`);
    }
    return value;
}

/** A Float32Array holding exactly the elements of `shape` (in C order). */
export function floatsOfShape(value, shape, name, what) {
    return floatsOfLength(value, product(shape), name, what, `[${shape}]`);
}

/** The product of a list of sizes (1 for none). */
export function product(dims) {
    let p = 1;
    for (const d of dims) p *= d;
    return p;
}

export function optionalFloats(value, length, name, what, shapeText) {
    return value === undefined || value === null ? null
        : floatsOfLength(value, length, name, what, shapeText);
}

export function int(value, name, what, { min = 0, max = MAX_SIZE } = {}) {
    if (typeof value != "number" || !Number.isInteger(value)) {
        throw new TypeError(`${what}: ${name} must be an integer, got ${describe(value)}`);
    }
    if (value < min || value > max) {
        throw new RangeError(`${what}: ${name} must be in [${min}, ${max}], got ${value}`);
    }
    return value;
}

export function real(value, name, what) {
    if (typeof value != "number") {
        throw new TypeError(`${what}: ${name} must be a number, got ${describe(value)}`);
    }
    return value;
}

/** One int, or a pair [h, w] of them: returns the pair. */
export function pair(value, name, what, limits) {
    const items = Array.isArray(value) ? value : [value, value];
    if (items.length !== 2) {
        throw new RangeError(`${what}: ${name} must be an integer or a pair [h, w], got ${describe(value)}`);
    }
    return items.map((v, i) => int(v, `${name}[${i}]`, what, limits));
}

export function shape(value, rank, name, what) {
    if (!Array.isArray(value)) {
        throw new TypeError(`${what}: ${name} must be an array of integers, got ${describe(value)}`);
    }
    if (rank !== undefined && value.length !== rank) {
        throw new RangeError(`${what}: ${name} must have ${rank} dimensions, got [${value}]`);
    }
    value.forEach((d, i) => int(d, `${name}[${i}]`, what));
    elementCount(value, name, what);
    return value;
}

export function elementCount(dims, name, what) {
    const count = product(dims);
    if (count > MAX_ELEMENTS) {
        throw new RangeError(`${what}: ${name} [${dims}] has ${count} elements, more than a ` +
            `WebAssembly memory holds (${MAX_ELEMENTS})`);
    }
    return count;
}

export function choice(value, choices, name, what) {
    if (typeof value != "string") {
        throw new TypeError(`${what}: ${name} must be a string, got ${describe(value)}`);
    }
    if (!choices.includes(value)) {
        throw new RangeError(`${what}: ${name} must be one of ${choices.map(c => `"${c}"`).join(", ")}, ` +
            `got "${value}"`);
    }
    return value;
}

export function bool(value, name, what) {
    if (typeof value != "boolean") {
        throw new TypeError(`${what}: ${name} must be true or false, got ${describe(value)}`);
    }
    return value;
}

/** An options object: undefined gives {}, unknown keys are refused (a typo must not pass silently). */
export function options(value, known, what) {
    if (value === undefined) return {};
    if (value === null || typeof value != "object" || Array.isArray(value)) {
        throw new TypeError(`${what}: options must be an object, got ${describe(value)}`);
    }
    for (const key of Object.keys(value)) {
        if (!known.includes(key)) {
            throw new TypeError(`${what}: unknown option "${key}"; known: ${known.join(", ")}`);
        }
    }
    return value;
}

export function describe(value) {
    if (typeof value == "string") return `"${value}"`;
    if (Array.isArray(value)) return `[${value.map(describe).join(", ")}]`;
    if (value === null || value === undefined) return String(value);
    if (typeof value == "object") return value.constructor?.name ?? "object";
    return String(value);
}
