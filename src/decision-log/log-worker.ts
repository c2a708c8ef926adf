/**
 * The decision log's writer thread: writes the lines of the packed batches the log hands over
 * (packed.ts) and appends them to the files (file-sink.ts), one write per batch, in order. Every
 * message is answered in order: a batch by what became of its records (and their lines when the
 * log keeps a window), a flush once everything before it is written, a close once the file is
 * closed. Nothing here throws to the log: a record that cannot be written is counted.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { FileSink, type SinkLine } from './file-sink.js';
import { BatchUnpacker, type PackedBatch } from './packed.js';
import type { FromLogWorker, LogWorkerData, ToLogWorker } from './worker-protocol.js';

if (parentPort === null) throw new Error('log-worker.ts runs as a worker thread');
const port = parentPort;
const data = workerData as LogWorkerData;
const sink = new FileSink(data.dir, data.maxFileBytes, data.maxFiles);
const unpacker = new BatchUnpacker({ includeQuery: data.includeQuery, includeText: false });
const policyLines = new Map<string, string>();
let retryAt = 0;

const send = (message: FromLogWorker): void => port.postMessage(message);
const messageOf = (error: unknown): string => (error instanceof Error ? error.message : String(error));

async function onMessage(message: ToLogWorker): Promise<void> {
  if (message.t === 'flush') {
    send({ t: 'flushed', id: message.id });
    return;
  }
  if (message.t === 'close') {
    await sink.close();
    send({ t: 'closed', id: message.id });
    return;
  }
  try {
    await writeBatch(message.batch);
  } catch (error) {
    // Not expected (every record and write is guarded): the batch is counted, never lost silently.
    const records = message.batch.records.length;
    send({ ...EMPTY, records, buildErrors: records, files: sink.files, lastError: messageOf(error) });
  }
}

const EMPTY = { t: 'written', written: 0, bytes: 0, writeErrors: 0, lines: [] } as const;

async function writeBatch(batch: PackedBatch): Promise<void> {
  for (const p of batch.policies) policyLines.set(p.hash, p.line);
  const lines: SinkLine[] = [];
  const kept: Array<{ policyHash: string; line: string }> = [];
  let buildErrors = 0;
  let lastError: string | null = null;
  for (const { policyHash, line } of unpacker.lines(batch)) {
    try {
      const text = line();
      lines.push({ policyHash, policyLine: policyLines.get(policyHash) as string, line: text });
      if (data.window) kept.push({ policyHash, line: text });
    } catch (error) {
      buildErrors++;
      lastError = messageOf(error);
    }
  }
  let written = 0;
  let bytes = 0;
  let writeErrors = 0;
  if (lines.length > 0) {
    if (Date.now() < retryAt) writeErrors = lines.length;
    else {
      try {
        bytes = await sink.write(lines);
        written = lines.length;
      } catch (error) {
        writeErrors = lines.length;
        lastError = messageOf(error);
        retryAt = Date.now() + data.retryMs;
      }
    }
  }
  send({
    t: 'written',
    records: batch.records.length,
    written,
    bytes,
    writeErrors,
    buildErrors,
    files: sink.files,
    lastError,
    lines: kept,
  });
}

// One message at a time, in order: a write finishes before the next batch's starts.
let chain: Promise<void> = Promise.resolve();
port.on('message', (message: ToLogWorker) => {
  chain = chain.then(() => onMessage(message));
});
