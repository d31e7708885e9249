// Types of "samebits/hashes" (src/hashes.mjs): the hash suites of docs/hash-suite.md.
import type { Samebits, Mode } from "./index.js";

export type Suite = "gemm" | "conv" | "ops";
export declare const SUITES: Suite[];
/** The line printed before a suite's lines. */
export declare function header(suite: Suite): string;
export interface SuiteOptions {
    mode?: Mode;
    threads?: number;
    /** Flip this bit of the first nonempty output before hashing (a negative control). */
    flipBit?: number | null;
}
/** SHA-256 over a suite's outputs (default exact mode, the object's threads). */
export declare function suiteDigest(sb: Samebits, suite: Suite, options?: SuiteOptions): string;
/** The suite's line, as `samebits hashes` prints it natively. */
export declare function hashLine(sb: Samebits, suite: Suite, options?: SuiteOptions): string;
export declare function formatLine(suite: Suite, mode: Mode, path: string, threads: number, digest: string): string;
