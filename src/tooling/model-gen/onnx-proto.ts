/**
 * The slice of the ONNX protobuf schema (onnx/onnx.proto, proto2) that the model generator writes,
 * encoded with protobufjs. Field numbers are those of onnx.proto; only the messages and fields we
 * emit are declared, and an encoder ignores what it does not know, so the bytes are plain ONNX.
 */
import protobuf from 'protobufjs';

const ONNX_SUBSET_PROTO = `
syntax = "proto2";
package onnx;

message AttributeProto {
  enum AttributeType {
    UNDEFINED = 0; FLOAT = 1; INT = 2; STRING = 3; TENSOR = 4; GRAPH = 5;
    FLOATS = 6; INTS = 7; STRINGS = 8; TENSORS = 9; GRAPHS = 10;
  }
  optional string name = 1;
  optional AttributeType type = 20;
  optional float f = 2;
  optional int64 i = 3;
  optional bytes s = 4;
  optional TensorProto t = 5;
  repeated float floats = 7;
  repeated int64 ints = 8;
}

message ValueInfoProto {
  optional string name = 1;
  optional TypeProto type = 2;
  optional string doc_string = 3;
}

message NodeProto {
  repeated string input = 1;
  repeated string output = 2;
  optional string name = 3;
  optional string op_type = 4;
  optional string domain = 7;
  repeated AttributeProto attribute = 5;
  optional string doc_string = 6;
}

message StringStringEntryProto {
  optional string key = 1;
  optional string value = 2;
}

message OperatorSetIdProto {
  optional string domain = 1;
  optional int64 version = 2;
}

message ModelProto {
  optional int64 ir_version = 1;
  repeated OperatorSetIdProto opset_import = 8;
  optional string producer_name = 2;
  optional string producer_version = 3;
  optional string domain = 4;
  optional int64 model_version = 5;
  optional string doc_string = 6;
  optional GraphProto graph = 7;
  repeated StringStringEntryProto metadata_props = 14;
}

message GraphProto {
  repeated NodeProto node = 1;
  optional string name = 2;
  repeated TensorProto initializer = 5;
  optional string doc_string = 10;
  repeated ValueInfoProto input = 11;
  repeated ValueInfoProto output = 12;
  repeated ValueInfoProto value_info = 13;
}

message TensorProto {
  repeated int64 dims = 1;
  optional int32 data_type = 2;
  repeated float float_data = 4 [packed = true];
  repeated int32 int32_data = 5 [packed = true];
  repeated int64 int64_data = 7 [packed = true];
  optional string name = 8;
  optional bytes raw_data = 9;
  optional string doc_string = 12;
}

message TensorShapeProto {
  message Dimension {
    oneof value {
      int64 dim_value = 1;
      string dim_param = 2;
    }
    optional string denotation = 3;
  }
  repeated Dimension dim = 1;
}

message TypeProto {
  message Tensor {
    optional int32 elem_type = 1;
    optional TensorShapeProto shape = 2;
  }
  oneof value {
    Tensor tensor_type = 1;
  }
  optional string denotation = 6;
}
`;

/** TensorProto.DataType values used here (onnx.proto numbering). */
export const OnnxDataType = {
  FLOAT: 1,
  UINT8: 2,
  INT8: 3,
  INT32: 6,
  INT64: 7,
} as const;
export type OnnxDataTypeCode = (typeof OnnxDataType)[keyof typeof OnnxDataType];

/** AttributeProto.AttributeType values used here. */
export const OnnxAttributeType = {
  FLOAT: 1,
  INT: 2,
  STRING: 3,
  FLOATS: 6,
  INTS: 7,
} as const;

export interface OnnxAttribute {
  name: string;
  type: number;
  f?: number;
  i?: number;
  s?: Uint8Array;
  floats?: number[];
  ints?: number[];
}

export interface OnnxNode {
  input: string[];
  output: string[];
  name: string;
  op_type: string;
  domain?: string;
  attribute: OnnxAttribute[];
}

export interface OnnxTensor {
  name: string;
  dims: number[];
  data_type: OnnxDataTypeCode;
  /** Little-endian element bytes. */
  raw_data: Uint8Array;
}

export interface OnnxDimension {
  dim_value?: number;
  dim_param?: string;
}

export interface OnnxValueInfo {
  name: string;
  type: { tensor_type: { elem_type: OnnxDataTypeCode; shape: { dim: OnnxDimension[] } } };
  doc_string?: string;
}

export interface OnnxGraph {
  name: string;
  node: OnnxNode[];
  initializer: OnnxTensor[];
  input: OnnxValueInfo[];
  output: OnnxValueInfo[];
  doc_string?: string;
}

export interface OnnxModel {
  ir_version: number;
  opset_import: { domain: string; version: number }[];
  producer_name: string;
  producer_version: string;
  doc_string: string;
  graph: OnnxGraph;
  metadata_props: { key: string; value: string }[];
}

let modelType: protobuf.Type | undefined;

function onnxModelType(): protobuf.Type {
  if (modelType === undefined) {
    // keepCase: field names stay as in onnx.proto (ir_version, raw_data, ...).
    const { root } = protobuf.parse(ONNX_SUBSET_PROTO, { keepCase: true });
    modelType = root.lookupType('onnx.ModelProto');
  }
  return modelType;
}

/** Serializes a ModelProto. Deterministic: fields are written in schema order, no maps. */
export function encodeOnnxModel(model: OnnxModel): Uint8Array {
  const type = onnxModelType();
  const problem = type.verify(model);
  if (problem !== null) throw new TypeError(`internal error: ONNX model does not fit the schema: ${problem}`);
  return type.encode(model).finish();
}

/** Parses bytes written by encodeOnnxModel back into plain objects (tests and inspection). */
export function decodeOnnxModel(bytes: Uint8Array): OnnxModel {
  const type = onnxModelType();
  const message = type.decode(bytes);
  return type.toObject(message, { longs: Number, defaults: false, arrays: true }) as OnnxModel;
}
