/**
 * `bench --cross-encoder DIR` generates the TinyBERT-L2 shape model only into a folder that does
 * not exist or is empty: a folder holding a model (the shipped one ships only an int8 variant, no
 * model.onnx) is never written.
 */
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ensureCrossEncoderModel } from '../../src/tooling/loadgen/bench-runner.js';

const root = mkdtempSync(join(tmpdir(), 'rg-bench-folder-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('the bench cross-encoder folder', () => {
  it('leaves a folder that holds an int8-only model untouched', async () => {
    const dir = join(root, 'int8-only');
    mkdirSync(join(dir, 'onnx'), { recursive: true });
    writeFileSync(join(dir, 'onnx', 'model_int8.onnx'), 'weights');
    writeFileSync(join(dir, 'tokenizer.json'), '{}');
    const lines: string[] = [];
    await ensureCrossEncoderModel(dir, (line) => lines.push(line));
    expect(readdirSync(dir).sort()).toEqual(['onnx', 'tokenizer.json']);
    expect(readdirSync(join(dir, 'onnx'))).toEqual(['model_int8.onnx']);
    expect(lines).toEqual([]);
  });

  it('generates the shape model where the folder is missing', async () => {
    const dir = join(root, 'missing');
    const lines: string[] = [];
    await ensureCrossEncoderModel(dir, (line) => lines.push(line));
    expect(readdirSync(join(dir, 'onnx'))).toContain('model.onnx');
    expect(lines.join('\n')).toMatch(/SPEED\/SHAPE/);
  }, 60_000);
});
