#!/usr/bin/env python3
"""Generates the LightGBM parity fixtures in test/trees/fixtures/lightgbm/ with the `lightgbm` PyPI
package (python/requirements-trees.txt; tooling only, never a runtime dependency). Run once and
commit the output; CI reads the files and never needs LightGBM:

    bash python/setup-venv.sh --with-trees
    python/.venv/bin/python scripts/make-lightgbm-fixtures.py

The data mirror ../shared/fixtures/xgboost: float32 features (so LightGBM's float64 view of a row
and the engine's float32 row hold the same numbers), a hidden signal on a few of them, 8 % NaN,
one integer-valued and one binary feature. Each test matrix has 160 random rows plus 40 rows
whose split features sit exactly on a threshold of the model (the float32 at or just below it,
and the next float32 above: LightGBM goes left when x <= threshold in float64) and, for the
missing-type fixtures, rows with exact zeros.

For each NAME: NAME.txt (Booster.save_model, LightGBM's text format), NAME.X.csv (headerless,
`nan` = missing), NAME.expected.json ({model, objective, rows, outputs, margin, prediction,
lightgbm_version}: margin = predict(raw_score=True), prediction = predict(), float64). Models the
engine must refuse (categorical split, linear tree, an objective without an exact transform) get
NAME.txt and a NAME.expected.json with `refuse` naming the reason, and no matrix.
"""
import json
import os

import lightgbm as lgb
import numpy as np

OUT = os.path.join(os.path.dirname(__file__), '..', 'test', 'trees', 'fixtures', 'lightgbm')
os.makedirs(OUT, exist_ok=True)
F = 12
rng = np.random.default_rng(39)


def matrix(n, missing=0.08):
    X = rng.normal(size=(n, F)).astype(np.float32)
    X[:, 3] = rng.integers(0, 4, size=n)
    X[:, 5] = rng.integers(0, 2, size=n)
    X[rng.random(size=X.shape) < missing] = np.nan
    return X


def signal(X):
    z = np.nan_to_num(X)
    return z[:, 0] + 0.5 * z[:, 1] - 0.3 * z[:, 3] + 0.4 * z[:, 5] * z[:, 2] + 0.2 * np.sin(3 * z[:, 4])


def threshold_rows(booster, X, n):
    """Rows with split features set exactly on (and just above) thresholds the model uses."""
    dump = booster.dump_model()
    pairs = []

    def walk(node):
        if 'split_feature' in node:
            if node.get('decision_type') == '<=':
                pairs.append((node['split_feature'], float(node['threshold'])))
            walk(node['left_child'])
            walk(node['right_child'])

    for tree in dump['tree_info']:
        walk(tree['tree_structure'])
    rows = X[:n].copy()
    for i in range(n):
        for _ in range(6):
            f, t = pairs[rng.integers(len(pairs))]
            below = np.float32(t)
            if float(below) > t:
                below = np.nextafter(below, np.float32(-np.inf))
            rows[i, f] = below if i % 2 == 0 else np.nextafter(below, np.float32(np.inf))
    return rows


def save(name, booster, Xte, objective, note=''):
    path = os.path.join(OUT, name + '.txt')
    booster.save_model(path)
    margin = booster.predict(Xte, raw_score=True).reshape(len(Xte), -1)
    pred = booster.predict(Xte).reshape(len(Xte), -1)
    np.savetxt(os.path.join(OUT, name + '.X.csv'), Xte, delimiter=',', fmt='%.9g')
    with open(os.path.join(OUT, name + '.expected.json'), 'w') as f:
        json.dump({'model': name, 'objective': objective, 'rows': len(Xte), 'outputs': margin.shape[1],
                   'margin': margin.astype(float).tolist(), 'prediction': pred.astype(float).tolist(),
                   'note': note, 'lightgbm_version': lgb.__version__}, f)
    print(name, booster.num_trees(), 'trees', os.path.getsize(path), 'bytes')


def refusal(name, booster, reason):
    path = os.path.join(OUT, name + '.txt')
    booster.save_model(path)
    with open(os.path.join(OUT, name + '.expected.json'), 'w') as f:
        json.dump({'model': name, 'refuse': reason, 'lightgbm_version': lgb.__version__}, f)
    print(name, 'refusal fixture', os.path.getsize(path), 'bytes')


def open_model_text(booster):
    return '\n'.join(line[len('threshold='):] for line in booster.model_to_string().split('\n')
                     if line.startswith('threshold='))


def test_matrix(booster, zeros=False):
    Xte = matrix(200)
    Xte[160:] = threshold_rows(booster, Xte[160:], 40)
    if zeros:
        Xte[rng.random(size=Xte.shape) < 0.1] = 0.0
        Xte[0, :] = 0.0
        Xte[1, :] = np.nan
    return Xte


BASE = dict(num_leaves=8, learning_rate=0.2, min_data_in_leaf=10, seed=7, deterministic=True,
            force_row_wise=True, num_threads=1, verbose=-1)
Xtr = matrix(3000)
s = signal(Xtr)
y_bin = (s + rng.normal(scale=0.5, size=len(Xtr)) > 0).astype(np.float64)
y_reg = s + rng.normal(scale=0.3, size=len(Xtr))
y_cls = np.digitize(s, [-0.5, 0.5]).astype(np.float64)
y_rank = np.clip(np.round(s + 1.5 + rng.normal(scale=0.4, size=len(Xtr))), 0, 4)
groups = [20] * (len(Xtr) // 20)


def train(params, y, rounds, X=None, **ds):
    return lgb.train({**BASE, **params}, lgb.Dataset(Xtr if X is None else X, label=y, **ds), num_boost_round=rounds)


b = train(dict(objective='binary'), y_bin, 30)
save('binary_t30', b, test_matrix(b), 'binary', 'missing type NaN (default use_missing)')
b = train(dict(objective='regression'), y_reg, 30)
save('regression_t30', b, test_matrix(b), 'regression')
b = train(dict(objective='lambdarank', metric='ndcg'), y_rank, 30, group=groups)
save('lambdarank_t30', b, test_matrix(b), 'lambdarank')
b = train(dict(objective='multiclass', num_class=3), y_cls, 10)
save('multiclass3_t10', b, test_matrix(b), 'multiclass', '3 classes, 30 trees')
b = train(dict(objective='cross_entropy'), (y_bin * 0.8 + 0.1), 20)
save('xentropy_t20', b, test_matrix(b), 'cross_entropy')
b = train(dict(objective='binary', use_missing=False), y_bin, 20)
save('binary_nomissing_t20', b, test_matrix(b, zeros=True), 'binary', 'use_missing=false: missing type None, NaN -> 0')
Xz = Xtr.copy()
Xz[np.isnan(Xz)] = 0.0
b = train(dict(objective='regression', zero_as_missing=True), y_reg, 20, X=Xz)
save('regression_zero_t20', b, test_matrix(b, zeros=True), 'regression', 'zero_as_missing=true: missing type Zero')

# Refusals: what the engine's IR cannot express exactly.
Xc = Xtr.copy()
Xc[:, 3] = np.nan_to_num(Xc[:, 3])
b = train(dict(objective='binary', max_cat_to_onehot=1, cat_smooth=1, min_data_per_group=5), y_bin, 4, X=Xc,
          categorical_feature=[3])
refusal('categorical_t4', b, 'categorical split')
b = train(dict(objective='regression', linear_tree=True), y_reg, 4)
refusal('linear_t4', b, 'linear tree')
b = train(dict(objective='poisson'), np.exp(np.clip(y_reg, -3, 3) / 2), 4)
refusal('poisson_t4', b, 'objective poisson (exp transform)')

# "Present vs missing" splits: where only whether feature 11 is missing carries signal, LightGBM
# writes threshold `inf` (every non-NaN value goes left, x = +inf included). The test rows put
# +inf, -inf and FLT_MAX into that feature and into others.
Xm = Xtr.copy()
Xm[:, 11] = np.where(rng.random(len(Xm)) < 0.3, np.nan, rng.normal(size=len(Xm)).astype(np.float32))
y_m = ((s + 1.5 * np.isnan(Xm[:, 11]) + rng.normal(scale=0.5, size=len(Xm))) > 0.5).astype(np.float64)
b = train(dict(objective='binary'), y_m, 20, X=Xm)
assert 'inf' in open_model_text(b).split(), 'expected an inf threshold'
Xte = test_matrix(b)
Xte[:, 11] = np.where(rng.random(len(Xte)) < 0.3, np.nan, rng.normal(size=len(Xte)).astype(np.float32))
special = np.array([np.inf, -np.inf, np.finfo(np.float32).max, -np.finfo(np.float32).max], dtype=np.float32)
for i in range(40):
    Xte[i, 11] = special[i % 4]
    Xte[i, i % F] = special[(i // 4) % 4] if i % F != 11 else Xte[i, 11]
save('binary_infsplit_t20', b, Xte, 'binary', 'threshold inf ("present vs missing"); rows with +-inf and FLT_MAX')
