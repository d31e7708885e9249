// A one-node ONNX model, Y = MatMul(A, B), written as protobuf bytes by hand
// so that the browser benchmark needs no ONNX tooling. A (m x k) is the
// graph's input; B (k x n) is an initializer, a constant weight, as in a
// linear layer (ONNX Runtime may then pack it once, at session creation).
//
// Only the few protobuf wire types the model needs: varints (type 0) and
// length-delimited fields (type 2). Field numbers are those of onnx.proto:
//   ModelProto: ir_version 1, graph 7, opset_import 8
//   OperatorSetIdProto: domain 1, version 2
//   GraphProto: node 1, name 2, initializer 5, input 11, output 12
//   NodeProto: input 1, output 2, name 3, op_type 4
//   TensorProto: dims 1, data_type 2 (1 = FLOAT), name 8, raw_data 9
//   ValueInfoProto: name 1, type 2;  TypeProto: tensor_type 1
//   TypeProto.Tensor: elem_type 1, shape 2;  TensorShapeProto: dim 1
//   TensorShapeProto.Dimension: dim_value 1

const utf8 = new TextEncoder();

function varint(value) {
  // Non-negative integers below 2^53, enough for every field here.
  const out = [];
  let v = value;
  while (v >= 0x80) {
    out.push((v % 0x80) | 0x80);
    v = Math.floor(v / 0x80);
  }
  out.push(v);
  return out;
}

class Writer {
  constructor() { this.parts = []; this.size = 0; }
  push(bytes) {
    const b = bytes instanceof Uint8Array ? bytes : Uint8Array.from(bytes);
    this.parts.push(b);
    this.size += b.length;
    return this;
  }
  key(field, wire) { return this.push(varint(field * 8 + wire)); }
  int(field, value) { return this.key(field, 0).push(varint(value)); }
  bytes(field, data) { return this.key(field, 2).push(varint(data.length)).push(data); }
  string(field, text) { return this.bytes(field, utf8.encode(text)); }
  message(field, writer) { return this.bytes(field, writer.finish()); }
  finish() {
    const out = new Uint8Array(this.size);
    let at = 0;
    for (const p of this.parts) { out.set(p, at); at += p.length; }
    return out;
  }
}

const FLOAT = 1;

function valueInfo(name, dims) {
  const shape = new Writer();
  for (const d of dims) shape.message(1, new Writer().int(1, d));
  const tensor = new Writer().int(1, FLOAT).message(2, shape);
  return new Writer().string(1, name).message(2, new Writer().message(1, tensor));
}

/** The model bytes for Y (m x n) = A (m x k) times the constant B (k x n).
 *  b: a Float32Array of k*n values, row-major. */
export function matmulModel(m, k, n, b) {
  if (b.length !== k * n) throw new Error(`B has ${b.length} values, not ${k}*${n}`);
  const raw = new Uint8Array(b.buffer, b.byteOffset, b.byteLength);
  const weight = new Writer().int(1, k).int(1, n).int(2, FLOAT).string(8, "B").bytes(9, raw);
  const node = new Writer().string(1, "A").string(1, "B").string(2, "Y").string(3, "matmul")
    .string(4, "MatMul");
  const graph = new Writer().message(1, node).string(2, "samebits-bench").message(5, weight)
    .message(11, valueInfo("A", [m, k])).message(12, valueInfo("Y", [m, n]));
  return new Writer().int(1, 8)                                  // IR version 8
    .message(8, new Writer().string(1, "").int(2, 13))           // opset 13
    .message(7, graph).finish();
}
