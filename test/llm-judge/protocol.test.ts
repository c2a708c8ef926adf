import { describe, expect, it } from 'vitest';
import { LlmResponseFormatError } from '../../src/tiers/llm-judge/index.js';
import { parseChatCompletion } from '../../src/tiers/llm-judge/protocol.js';
import { retryAfterMs } from '../../src/tiers/llm-judge/http-client.js';

const body = (choice: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
  id: 'x',
  object: 'chat.completion',
  choices: [{ index: 0, message: { role: 'assistant', content: 'yes' }, finish_reason: 'stop', ...choice }],
  ...extra,
});

describe('reading a chat completion', () => {
  it('reads content, positions with alternatives, finish reason and usage', () => {
    const parsed = parseChatCompletion(
      body(
        {
          logprobs: {
            content: [
              {
                token: 'yes',
                logprob: -0.1,
                bytes: [121, 101, 115],
                top_logprobs: [
                  { token: 'yes', logprob: -0.1 },
                  { token: 'no', logprob: -2.4 },
                ],
              },
            ],
          },
        },
        { usage: { prompt_tokens: 120, completion_tokens: 1, total_tokens: 121 } },
      ),
    );
    expect(parsed).toEqual({
      content: 'yes',
      positions: [
        {
          token: 'yes',
          logprob: -0.1,
          top: [
            { token: 'yes', logprob: -0.1 },
            { token: 'no', logprob: -2.4 },
          ],
        },
      ],
      finishReason: 'stop',
      promptTokens: 120,
      completionTokens: 1,
    });
  });

  it('no logprobs (null, absent, or an empty content list) reads as undefined positions', () => {
    expect(parseChatCompletion(body({ logprobs: null })).positions).toBeUndefined();
    expect(parseChatCompletion(body({})).positions).toBeUndefined();
    expect(parseChatCompletion(body({ logprobs: { content: [] } })).positions).toBeUndefined();
    expect(parseChatCompletion(body({ logprobs: { content: null } })).positions).toBeUndefined();
  });

  it('an omitted logprob is unknown (NaN), not an error; a wrong one is an error', () => {
    const parsed = parseChatCompletion(
      body({
        logprobs: { content: [{ token: 'yes', top_logprobs: [{ token: 'yes' }, { token: 'no', logprob: -3 }] }] },
      }),
    );
    expect(parsed.positions?.[0].logprob).toBeNaN();
    expect(parsed.positions?.[0].top[0].logprob).toBeNaN();
    expect(parsed.positions?.[0].top[1].logprob).toBe(-3);
    for (const bad of [
      body({ logprobs: { content: [{ token: 'yes', logprob: 0.5 }] } }),
      body({ logprobs: { content: [{ token: 'yes', logprob: '-1' }] } }),
      body({ logprobs: { content: [{ logprob: -1 }] } }),
      body({ logprobs: 'x' }),
      body({ message: { role: 'assistant', content: 7 } }),
      { choices: [] },
      { choices: 'nope' },
      null,
      [],
    ]) {
      expect(() => parseChatCompletion(bad)).toThrow(LlmResponseFormatError);
    }
  });

  it('content null (a refusal or a tool call) reads as empty text', () => {
    expect(parseChatCompletion(body({ message: { role: 'assistant', content: null } })).content).toBe('');
  });
});

describe('Retry-After', () => {
  const h = (entries: Record<string, string>) => new Headers(entries);
  it('reads retry-after-ms, seconds and HTTP dates, capped at 120 s', () => {
    expect(retryAfterMs(h({ 'retry-after-ms': '250' }), 0)).toBe(250);
    expect(retryAfterMs(h({ 'retry-after': '2' }), 0)).toBe(2000);
    expect(retryAfterMs(h({ 'retry-after': '0.5' }), 0)).toBe(500);
    const now = Date.parse('2026-01-01T00:00:00Z');
    expect(retryAfterMs(h({ 'retry-after': 'Thu, 01 Jan 2026 00:00:03 GMT' }), now)).toBe(3000);
    expect(retryAfterMs(h({ 'retry-after': '99999' }), 0)).toBe(120_000);
    expect(retryAfterMs(h({ 'retry-after': 'soon' }), 0)).toBeUndefined();
    expect(retryAfterMs(h({}), 0)).toBeUndefined();
  });
});
