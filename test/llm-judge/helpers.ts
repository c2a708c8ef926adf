/**
 * Test helpers around the chat-completions protocol stand-in: reading the judge's prompt back
 * (what a model would see) and building answer positions whose logprobs encode a chosen P(yes).
 */
import type { StandInHandler, StandInPosition, StandInRequest, StandInRequestBody } from './stand-in-server.js';

export interface PromptPassage {
  readonly title?: string;
  readonly text: string;
  readonly metadata?: Record<string, unknown>;
  readonly truncated?: boolean;
}

export interface ParsedPrompt {
  readonly system: string;
  readonly user: string;
  readonly query: string;
  readonly passages: PromptPassage[];
  /** Question instructions in order. */
  readonly questions: string[];
}

/** Reads the judge's prompt: the JSON state inside its tags and the question lines. */
export function parsePrompt(body: StandInRequestBody): ParsedPrompt {
  const system = body.messages.find((m) => m.role === 'system')?.content ?? '';
  const user = body.messages.find((m) => m.role === 'user')?.content ?? '';
  const queryMatch = /<query_json>(.*?)<\/query_json>/s.exec(user);
  if (queryMatch === null) throw new Error('no <query_json> in the prompt');
  const query = (JSON.parse(queryMatch[1]) as { query: string }).query;
  const passages: PromptPassage[] = [];
  for (const m of user.matchAll(/<untrusted_passage_json index="(\d+)">(.*?)<\/untrusted_passage_json>/gs))
    passages.push(JSON.parse(m[2]) as PromptPassage);
  const questions: string[] = [];
  const single = /^Question: (.*)$/m.exec(user);
  if (single !== null) questions.push(single[1]);
  else {
    const block = /Questions:\n((?:\d+\. .*\n?)+)/.exec(user);
    if (block === null) throw new Error('no questions in the prompt');
    for (const line of block[1].trim().split('\n')) questions.push(line.replace(/^\d+\. /, ''));
  }
  return { system, user, query, passages, questions };
}

/**
 * An answer position whose yes/no alternatives encode exactly P(yes) = p: yes mass 0.98·p split
 * over "yes"/" Yes", no mass 0.98·(1 − p) over "no"/" No", 0.02 on a non-answer token.
 */
export function yesNoPosition(p: number, leadingSpace = false): StandInPosition {
  const sp = leadingSpace ? ' ' : '';
  const top: Array<[string, number]> = [];
  if (p > 0) top.push([`${sp}yes`, Math.log(0.98 * p * 0.7)], [`${sp}Yes`, Math.log(0.98 * p * 0.3)]);
  if (p < 1) top.push([`${sp}no`, Math.log(0.98 * (1 - p) * 0.8)], [`${sp}No`, Math.log(0.98 * (1 - p) * 0.2)]);
  top.push([`${sp}maybe`, Math.log(0.02)]);
  top.sort((a, b) => b[1] - a[1]);
  const chosen = top.find(([t]) => t.trim().toLowerCase() === 'yes' || t.trim().toLowerCase() === 'no') ?? top[0];
  return { token: chosen[0], logprob: chosen[1], top };
}

export type Oracle = (query: string, passage: PromptPassage, instruction: string) => number;

/**
 * A handler answering every (passage, question) of a request in row-major order from `oracle`
 * (P(yes) per answer), after `delayMs`.
 */
export function oracleHandler(oracle: Oracle, options: { delayMs?: number } = {}): StandInHandler {
  return (request: StandInRequest) => {
    const prompt = parsePrompt(request.body);
    const positions: StandInPosition[] = [];
    for (const passage of prompt.passages)
      for (const instruction of prompt.questions)
        positions.push(yesNoPosition(oracle(prompt.query, passage, instruction), positions.length > 0));
    return { kind: 'answer', positions, delayMs: options.delayMs };
  };
}

export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
