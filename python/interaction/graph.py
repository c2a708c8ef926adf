"""The segment-local interaction model as one torch module over the engine's pair input
(input_ids, attention_mask, token_type_ids of `[CLS] query [SEP] passage [SEP]`), for ONNX export.

Inside: the passage segment gets its own virtual [CLS] (appended, position 0) and positions
restarting at 1, attention stays within each segment, token types are zero: each segment is
encoded exactly as the bi-encoder encodes the text alone. Then the interaction features of
interaction.py and the trained head.
"""
import math

import torch

CLS, SEP = 101, 102


class SegmentLocalBert(torch.nn.Module):
    def __init__(self, bert):
        super().__init__()
        self.bert = bert  # transformers BertModel (eager weights only are used)

    def forward(self, ids, pos, allowed):
        emb = self.bert.embeddings
        h = emb.word_embeddings(ids) + emb.position_embeddings(pos) + emb.token_type_embeddings(torch.zeros_like(ids))
        h = emb.LayerNorm(h)
        bias = (1.0 - allowed.unsqueeze(1).float()) * -1e4  # [B,1,L,L]
        for layer in self.bert.encoder.layer:
            att = layer.attention
            B, L, D = h.shape
            nh = self.bert.config.num_attention_heads
            hd = D // nh
            q = att.self.query(h).view(B, L, nh, hd).transpose(1, 2)
            k = att.self.key(h).view(B, L, nh, hd).transpose(1, 2)
            v = att.self.value(h).view(B, L, nh, hd).transpose(1, 2)
            a = torch.softmax(q @ k.transpose(-1, -2) / math.sqrt(hd) + bias, -1)
            ctx = (a @ v).transpose(1, 2).reshape(B, L, D)
            h = att.output.LayerNorm(att.output.dense(ctx) + h)
            inter = torch.nn.functional.gelu(layer.intermediate.dense(h))
            h = layer.output.LayerNorm(layer.output.dense(inter) + h)
        return h


class InteractionScorer(torch.nn.Module):
    def __init__(self, bert, idf, head, mus, sigma, k1, b, avglen):
        super().__init__()
        self.encoder = SegmentLocalBert(bert)
        self.register_buffer("idf", torch.tensor(idf, dtype=torch.float32))
        self.head = head
        self.register_buffer("mus", torch.tensor(mus, dtype=torch.float32))
        self.sigma, self.k1, self.b, self.avglen = sigma, k1, b, avglen

    def forward(self, input_ids, attention_mask, token_type_ids):
        B = input_ids.shape[0]
        valid = attention_mask > 0
        seg_b = (token_type_ids > 0) & valid
        seg_a = (token_type_ids == 0) & valid
        pos = torch.where(seg_b, torch.cumsum(seg_b.long(), 1), torch.cumsum(seg_a.long(), 1) - 1).clamp(min=0)
        one = torch.ones((B, 1), dtype=torch.bool, device=input_ids.device)
        ids = torch.cat([input_ids, torch.full((B, 1), CLS, dtype=input_ids.dtype)], 1)
        pos = torch.cat([pos, torch.zeros((B, 1), dtype=pos.dtype)], 1)
        seg_b = torch.cat([seg_b, one], 1)
        seg_a = torch.cat([seg_a, ~one], 1)
        valid = torch.cat([valid, one], 1)
        allowed = valid.unsqueeze(2) & valid.unsqueeze(1) & (seg_b.unsqueeze(2) == seg_b.unsqueeze(1))
        h = self.encoder(ids, pos, allowed)
        fa, fb = seg_a.float().unsqueeze(-1), seg_b.float().unsqueeze(-1)
        mean_a = (h * fa).sum(1) / fa.sum(1)
        mean_b = (h * fb).sum(1) / fb.sum(1)
        cos = torch.nn.functional.cosine_similarity(mean_a, mean_b, dim=-1)
        special = (ids == CLS) | (ids == SEP)
        q_mask = (seg_a & ~special).float()  # [B,L]
        p_mask = (seg_b & ~special).float()
        hn = h / h.norm(dim=-1, keepdim=True)
        S = hn @ hn.transpose(1, 2)  # [B,L,L]
        w = self.idf[ids] * q_mask
        w_sum = w.sum(1).clamp(min=1e-6)
        wn = w / w_sum.unsqueeze(1)
        maxsim = (S - (1 - p_mask).unsqueeze(1) * 4.0).max(2).values
        f_maxsim = (wn * maxsim).sum(1)
        tf = ((ids.unsqueeze(2) == ids.unsqueeze(1)).float() * p_mask.unsqueeze(1)).sum(2)
        f_cover = (wn * (tf > 0).float()).sum(1)
        plen = p_mask.sum(1)
        norm = self.k1 * (1 - self.b + self.b * plen / self.avglen)
        bm25 = (w * tf * (self.k1 + 1) / (tf + norm.unsqueeze(1))).sum(1)
        kern = torch.exp(-((S.unsqueeze(-1) - self.mus) ** 2) / (2 * self.sigma**2)) * p_mask.unsqueeze(1).unsqueeze(-1)
        K = kern.sum(2)  # [B,L,k]
        f_kern = (wn.unsqueeze(-1) * torch.log1p(K)).sum(1)  # [B,k]
        feats = torch.cat(
            [
                torch.stack([cos, f_maxsim, f_cover, bm25 / w_sum, torch.log1p(bm25), torch.log(plen + 1)], 1),
                f_kern,
            ],
            1,
        )
        out = self.head(feats)  # [B] (relevance alone) or [B, signals]
        return out if out.dim() == 2 else out.unsqueeze(-1)
