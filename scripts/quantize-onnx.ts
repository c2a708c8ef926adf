/**
 * Dynamic int8 (per-channel qint8, the importer's setting) of an exported ONNX graph.
 *
 *   npx tsx scripts/quantize-onnx.ts <model.onnx> <model_int8.onnx>
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { decodeOnnxModel, encodeOnnxModel } from '../src/tooling/model-gen/onnx-proto.js';
import { quantizeDynamic } from '../src/tooling/model-gen/quantize.js';

const [input, output] = process.argv.slice(2);
if (input === undefined || output === undefined) throw new Error('usage: quantize-folder.ts <in.onnx> <out.onnx>');
writeFileSync(
  output,
  encodeOnnxModel(quantizeDynamic(decodeOnnxModel(readFileSync(input)), 'qint8', { perChannel: true }).model),
);
console.log(`int8 → ${output}`);
