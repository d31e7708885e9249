// Types of the samebits npm package (index.mjs).

/** "exact": the documented order and rounding, the same bits everywhere. "fast": the path's fastest kernels. */
export type Mode = "fast" | "exact";

/** The fused activations of matmul and conv2d (after the bias). */
export type Activation = "none" | "relu" | "relu6" | "leaky_relu" | "gelu" | "gelu_tanh" | "silu" |
    "hardswish" | "hardsigmoid" | "sigmoid" | "tanh";

/** Options every computing call takes. */
export interface CallOptions {
    /** Default "fast". */
    mode?: Mode;
    /** Where to write the result (a Float32Array of the result's length); returned. */
    out?: Float32Array;
    /** Threads this call may use, 1 to init's threads (default: init's). Exact bits never depend on it. */
    threads?: number;
}

export interface MatmulOptions extends CallOptions {
    /** n values added to every row of the product. */
    bias?: Float32Array;
    activation?: Activation;
    /** leaky_relu's slope (default 0.01). */
    negativeSlope?: number;
    /** a holds A's transpose (k x m, row-major). */
    transposeA?: boolean;
    /** b holds B's transpose (n x k, row-major): the layout of a linear layer's weight. */
    transposeB?: boolean;
}

export type Pair = number | [number, number];

export interface Conv2dOptions extends CallOptions {
    bias?: Float32Array;
    stride?: Pair;
    /** An int, [h, w], [top, bottom, left, right], "valid" or "same" (stride 1). */
    padding?: Pair | [number, number, number, number] | "valid" | "same";
    dilation?: Pair;
    groups?: number;
    activation?: Activation;
    negativeSlope?: number;
}

/** A result with its NCHW shape. */
export interface Shaped {
    data: Float32Array;
    shape: number[];
}

export interface MaxPool2dOptions {
    kernelSize: Pair;
    stride?: Pair;
    padding?: Pair;
    dilation?: Pair;
    ceilMode?: boolean;
    out?: Float32Array;
    threads?: number;
}

export interface AvgPool2dOptions {
    kernelSize: Pair;
    stride?: Pair;
    padding?: Pair;
    ceilMode?: boolean;
    /** Default true, as in torch. */
    countIncludePad?: boolean;
    divisorOverride?: number | null;
    out?: Float32Array;
    threads?: number;
}

export interface InterpolateOptions {
    size: Pair;
    /** Default "nearest". */
    mode?: "nearest" | "bilinear";
    alignCorners?: boolean;
    out?: Float32Array;
    threads?: number;
}

export interface BroadcastOptions extends CallOptions {
    /** a's shape (default [a.length]); with bShape, numpy broadcasting. */
    aShape?: number[];
    bShape?: number[];
}

export interface LayerNormOptions extends CallOptions {
    /** How many trailing axes are normalized together (default 1). */
    normalizedDims?: number;
    weight?: Float32Array;
    bias?: Float32Array;
    /** Default 1e-5 (rounded to float32). */
    eps?: number;
}

export interface BatchNormOptions extends CallOptions {
    runningMean: Float32Array;
    runningVar: Float32Array;
    weight?: Float32Array;
    bias?: Float32Array;
    eps?: number;
}

export interface GroupNormOptions extends CallOptions {
    weight?: Float32Array;
    bias?: Float32Array;
    eps?: number;
}

export interface Info {
    version: string;
    /** The kernel path: "vec4" (WebAssembly SIMD128). */
    path: string;
    threads: number;
    /** Whether the threaded module is loaded. */
    threaded: boolean;
    /** Whether the relaxed-SIMD build is loaded. */
    relaxedSimd: boolean;
    /** Why fewer threads than asked for are used, or null. */
    threadsNote: string | null;
    /** Whether fast mode uses fused multiply-add. */
    fastModeFused: boolean;
}

export interface DigestOptions {
    /** The array's shape (default [x.length]); part of the hashed header. */
    shape?: number[];
    /** Hash every NaN as 0x7FC00000 (default true). */
    canonicalNan?: boolean;
}

/** Packed data in the module's memory; freed by dispose() or when collected. */
export declare class Packed {
    readonly bytes: number;
    /** Frees the packed data now; using the object afterwards is a TypeError. */
    dispose(): void;
}

/** B (k x n) packed once for matmul(a, packed, m, k, n). */
export declare class PackedMatrix extends Packed {
    readonly k: number;
    readonly n: number;
}

/** Convolution weights packed once for conv2d (pass null as weightShape). */
export declare class PackedConv2dWeight extends Packed {
    readonly shape: number[];
    readonly groups: number;
}

/** A typed array holding one of the element types an ONNX graph computes with. */
export type TensorData = Float32Array | BigInt64Array | BigUint64Array | Int32Array | Uint32Array |
    Int16Array | Uint16Array | Int8Array | Uint8Array;

/** A tensor in or out of a model: C-ordered elements and the shape. */
export interface Tensor<D extends TensorData = TensorData> {
    data: D;
    dims: number[];
}

/** A graph input or output as the model declares it (a dimension: size, symbolic name or null). */
export interface TensorInfo {
    readonly name: string;
    readonly dtype: string;
    readonly shape: (number | string | null)[] | null;
}

export interface ModelOptions {
    /** "exact" (the default: the same bits everywhere) or "fast". */
    mode?: Mode;
    threads?: number;
    /** External data files, by the location the model names them. */
    external?: Record<string, Uint8Array | ArrayBuffer>;
}

export interface RunOptions {
    /** The outputs to return (default: all). */
    outputs?: string[];
    threads?: number;
    /** Add this run's time per operator type to `profile`, and per node to `nodeProfile`. */
    profile?: boolean;
}

/** One node's share of the profiled runs (Model.nodeProfile). */
export interface NodeTime {
    /** As in the file ("" when it has none). */
    name: string;
    /** Its position among the file's nodes. */
    index: number;
    /** Its operator type; a fused node as "Conv+relu". */
    op: string;
    ms: number;
    calls: number;
}

/** An ONNX model in the C graph runtime (loadModel). */
export declare class Model {
    readonly inputs: TensorInfo[];
    readonly outputs: TensorInfo[];
    readonly mode: Mode;
    /** Milliseconds and node runs per operator type over the runs with {profile: true}. */
    readonly profile: Record<string, { ms: number; calls: number }>;
    /** Each node's milliseconds and runs over the runs with {profile: true}, in run order. */
    readonly nodeProfile: NodeTime[];
    /** Forgets what runs with {profile: true} added to profile and nodeProfile. */
    resetProfile(): void;
    run(feeds: Record<string, Tensor>, options?: RunOptions): Record<string, Tensor & { dtype: string }>;
    /** Frees the session; later calls are TypeErrors. */
    dispose(): void;
}

/** The API over one loaded module: what init() returns. Every function below is also a method. */
export declare class Samebits {
    /** Loads an ONNX model (its bytes) into the C graph runtime. */
    loadModel(bytes: Uint8Array | ArrayBuffer, options?: ModelOptions): Model;
    readonly threads: number;
    readonly threadsNote: string | null;
    readonly version: string;
    readonly pathName: string;
    info(): Info;
    /** Ends the object: terminates the threaded module's workers; later calls are TypeErrors. */
    dispose(): void;
    matmul(a: Float32Array, b: Float32Array | PackedMatrix, m: number, k: number, n: number, options?: MatmulOptions): Float32Array;
    /** B packed once, for the weights of a linear layer (transposeB: b is n x k). */
    packMatrix(b: Float32Array, k: number, n: number, options?: { transposeB?: boolean; threads?: number }): PackedMatrix;
    conv2d(x: Float32Array, xShape: number[], weight: Float32Array | PackedConv2dWeight, weightShape: number[] | null | undefined, options?: Conv2dOptions): Shaped;
    packConv2dWeight(weight: Float32Array, weightShape: number[], options?: { groups?: number }): PackedConv2dWeight;
    maxPool2d(x: Float32Array, xShape: number[], options: MaxPool2dOptions): Shaped;
    avgPool2d(x: Float32Array, xShape: number[], options: AvgPool2dOptions): Shaped;
    adaptiveAvgPool2d(x: Float32Array, xShape: number[], outputSize: Pair, options?: { out?: Float32Array; threads?: number }): Shaped;
    interpolate(x: Float32Array, xShape: number[], options: InterpolateOptions): Shaped;
    exp(x: Float32Array, options?: CallOptions): Float32Array;
    log(x: Float32Array, options?: CallOptions): Float32Array;
    tanh(x: Float32Array, options?: CallOptions): Float32Array;
    erf(x: Float32Array, options?: CallOptions): Float32Array;
    sigmoid(x: Float32Array, options?: CallOptions): Float32Array;
    relu(x: Float32Array, options?: CallOptions): Float32Array;
    relu6(x: Float32Array, options?: CallOptions): Float32Array;
    leakyRelu(x: Float32Array, options?: CallOptions & { negativeSlope?: number }): Float32Array;
    gelu(x: Float32Array, options?: CallOptions & { approximate?: "none" | "tanh" }): Float32Array;
    silu(x: Float32Array, options?: CallOptions): Float32Array;
    hardswish(x: Float32Array, options?: CallOptions): Float32Array;
    hardsigmoid(x: Float32Array, options?: CallOptions): Float32Array;
    sqrt(x: Float32Array, options?: CallOptions): Float32Array;
    elu(x: Float32Array, options?: CallOptions & { alpha?: number }): Float32Array;
    softplus(x: Float32Array, options?: CallOptions): Float32Array;
    mish(x: Float32Array, options?: CallOptions): Float32Array;
    sin(x: Float32Array, options?: CallOptions): Float32Array;
    cos(x: Float32Array, options?: CallOptions): Float32Array;
    add(a: Float32Array, b: Float32Array, options?: BroadcastOptions): Float32Array;
    sub(a: Float32Array, b: Float32Array, options?: BroadcastOptions): Float32Array;
    mul(a: Float32Array, b: Float32Array, options?: BroadcastOptions): Float32Array;
    div(a: Float32Array, b: Float32Array, options?: BroadcastOptions): Float32Array;
    maximum(a: Float32Array, b: Float32Array, options?: BroadcastOptions): Float32Array;
    minimum(a: Float32Array, b: Float32Array, options?: BroadcastOptions): Float32Array;
    pow(a: Float32Array, b: Float32Array, options?: BroadcastOptions): Float32Array;
    sum(x: Float32Array, xShape: number[], axis: number, options?: CallOptions): Float32Array;
    mean(x: Float32Array, xShape: number[], axis: number, options?: CallOptions): Float32Array;
    softmax(x: Float32Array, xShape: number[], axis?: number, options?: CallOptions): Float32Array;
    logSoftmax(x: Float32Array, xShape: number[], axis?: number, options?: CallOptions): Float32Array;
    layerNorm(x: Float32Array, xShape: number[], options?: LayerNormOptions): Float32Array;
    batchNorm(x: Float32Array, xShape: number[], options: BatchNormOptions): Float32Array;
    groupNorm(x: Float32Array, xShape: number[], numGroups: number, options?: GroupNormOptions): Float32Array;
    /** The portable test values of docs/test-values.md. */
    portableValues(count: number, seed: number, nspecial?: number): Float32Array;
}

export interface InitOptions {
    /** Threads the calls may use: a number (default 1) or "auto" (every processor). */
    threads?: number | "auto";
    /** Load the relaxed-SIMD build: default where the engine has relaxed SIMD. */
    relaxedSimd?: boolean;
}

/** Loads the module; the functions below then use it. */
export declare function init(options?: InitOptions): Promise<Samebits>;

/** Loads an ONNX model with init()'s module (init is called first when needed). */
export declare function loadModel(bytes: Uint8Array | ArrayBuffer,
                                  options?: ModelOptions & InitOptions): Promise<Model>;

/** samebits.testing.digest of a Float32Array: the same 64 hex digits as in Python. */
export declare function digest(x: Float32Array, options?: DigestOptions): string;

export declare const info: Samebits["info"];
export declare const matmul: Samebits["matmul"];
export declare const conv2d: Samebits["conv2d"];
export declare const maxPool2d: Samebits["maxPool2d"];
export declare const avgPool2d: Samebits["avgPool2d"];
export declare const adaptiveAvgPool2d: Samebits["adaptiveAvgPool2d"];
export declare const interpolate: Samebits["interpolate"];
export declare const exp: Samebits["exp"];
export declare const log: Samebits["log"];
export declare const tanh: Samebits["tanh"];
export declare const erf: Samebits["erf"];
export declare const sigmoid: Samebits["sigmoid"];
export declare const relu: Samebits["relu"];
export declare const relu6: Samebits["relu6"];
export declare const leakyRelu: Samebits["leakyRelu"];
export declare const gelu: Samebits["gelu"];
export declare const silu: Samebits["silu"];
export declare const hardswish: Samebits["hardswish"];
export declare const hardsigmoid: Samebits["hardsigmoid"];
export declare const sqrt: Samebits["sqrt"];
export declare const elu: Samebits["elu"];
export declare const softplus: Samebits["softplus"];
export declare const mish: Samebits["mish"];
export declare const sin: Samebits["sin"];
export declare const cos: Samebits["cos"];
export declare const add: Samebits["add"];
export declare const sub: Samebits["sub"];
export declare const mul: Samebits["mul"];
export declare const div: Samebits["div"];
export declare const maximum: Samebits["maximum"];
export declare const minimum: Samebits["minimum"];
export declare const pow: Samebits["pow"];
export declare const sum: Samebits["sum"];
export declare const mean: Samebits["mean"];
export declare const softmax: Samebits["softmax"];
export declare const logSoftmax: Samebits["logSoftmax"];
export declare const layerNorm: Samebits["layerNorm"];
export declare const batchNorm: Samebits["batchNorm"];
export declare const groupNorm: Samebits["groupNorm"];
export declare const portableValues: Samebits["portableValues"];
export declare const packMatrix: Samebits["packMatrix"];
export declare const packConv2dWeight: Samebits["packConv2dWeight"];
