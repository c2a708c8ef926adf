/** The protocol names of the remote tier (shared by its options and its errors). */

/**
 * The backend's API: `cohere` (POST /v2/rerank: Cohere, Jina, infinity, vLLM, `relevance-gate
 * serve`), `tei` (text-embeddings-inference POST /rerank), `kserve` (KServe v2 / Triton infer).
 */
export type RemoteProtocol = 'cohere' | 'tei' | 'kserve';
