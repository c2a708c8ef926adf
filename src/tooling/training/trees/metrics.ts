/**
 * Evaluation metrics printed after training: logloss and ROC AUC (binary), RMSE (regression),
 * multi-class logloss and accuracy. Probabilities are clipped to [1e-15, 1 - 1e-15] in logloss, as
 * XGBoost does. AUC counts ties as half (Mann-Whitney U).
 */

const EPS = 1e-15;

export function logloss(prob: ArrayLike<number>, labels: ArrayLike<number>): number {
  let s = 0;
  for (let i = 0; i < labels.length; i++) {
    const p = Math.min(1 - EPS, Math.max(EPS, prob[i] as number));
    const y = labels[i] as number;
    s -= y * Math.log(p) + (1 - y) * Math.log(1 - p);
  }
  return s / labels.length;
}

/** ROC AUC for 0/1 labels (labels >= 0.5 count as positive); NaN when one class is absent. */
export function auc(score: ArrayLike<number>, labels: ArrayLike<number>): number {
  const n = labels.length;
  const idx = Array.from({ length: n }, (_, i) => i).sort((a, b) => (score[a] as number) - (score[b] as number));
  let pos = 0;
  let rankSum = 0;
  for (let i = 0; i < n; ) {
    let j = i;
    while (j + 1 < n && score[idx[j + 1] as number] === score[idx[i] as number]) j++;
    const avgRank = (i + j) / 2 + 1;
    for (let k = i; k <= j; k++) {
      if ((labels[idx[k] as number] as number) >= 0.5) {
        pos++;
        rankSum += avgRank;
      }
    }
    i = j + 1;
  }
  const neg = n - pos;
  if (pos === 0 || neg === 0) return NaN;
  return (rankSum - (pos * (pos + 1)) / 2) / (pos * neg);
}

export function rmse(pred: ArrayLike<number>, labels: ArrayLike<number>): number {
  let s = 0;
  for (let i = 0; i < labels.length; i++) {
    const d = (pred[i] as number) - (labels[i] as number);
    s += d * d;
  }
  return Math.sqrt(s / labels.length);
}

/** Row-major probabilities (nRows × k) against class-index labels. */
export function multiLogloss(prob: ArrayLike<number>, labels: ArrayLike<number>, k: number): number {
  let s = 0;
  for (let i = 0; i < labels.length; i++) {
    s -= Math.log(Math.min(1 - EPS, Math.max(EPS, prob[i * k + (labels[i] as number)] as number)));
  }
  return s / labels.length;
}

export function accuracy(prob: ArrayLike<number>, labels: ArrayLike<number>, k: number): number {
  let right = 0;
  for (let i = 0; i < labels.length; i++) {
    let best = 0;
    for (let c = 1; c < k; c++) if ((prob[i * k + c] as number) > (prob[i * k + best] as number)) best = c;
    if (best === labels[i]) right++;
  }
  return right / labels.length;
}
