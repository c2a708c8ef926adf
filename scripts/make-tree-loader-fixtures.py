#!/usr/bin/env python3
"""Generates the small extra parity fixtures in test/trees/fixtures/ with XGBoost 1.7.4 (Debian's
python3-xgboost; reference only, never a runtime dependency). They cover what the shared fixtures
do not: a dart booster, multi:softmax, reg:logistic, and XGBoost 1.x's own legacy binary ("binf"
header, base_score stored as a probability). Run: /usr/bin/python3 scripts/make-tree-loader-fixtures.py
"""
import json
import os

import numpy as np
import xgboost as xgb

OUT = os.path.join(os.path.dirname(__file__), '..', 'test', 'trees', 'fixtures')
os.makedirs(OUT, exist_ok=True)
rng = np.random.default_rng(23)
F = 12


def matrix(n):
    X = rng.normal(size=(n, F)).astype(np.float32)
    X[:, 3] = rng.integers(0, 4, size=n)
    X[rng.random(size=X.shape) < 0.08] = np.nan
    return X


Xtr = matrix(2000)
signal = np.nan_to_num(Xtr[:, 0]) + 0.5 * np.nan_to_num(Xtr[:, 1]) - 0.3 * np.nan_to_num(Xtr[:, 3])
y_bin = (signal + rng.normal(scale=0.5, size=len(Xtr)) > 0).astype(np.float32)
y_cls = np.digitize(signal, [-0.5, 0.5]).astype(np.float32)
y_prob = (1 / (1 + np.exp(-signal))).astype(np.float32)
Xte = matrix(200)

specs = [
    ('dart_t30_d3', dict(booster='dart', objective='binary:logistic', rate_drop=0.3, skip_drop=0.0,
                         max_depth=3, eta=0.3, base_score=0.3468, seed=5), y_bin, 30),
    ('softmax3_t15_d3', dict(objective='multi:softmax', num_class=3, max_depth=3, eta=0.3, seed=5), y_cls, 15),
    ('reglogistic_t20_d3', dict(objective='reg:logistic', max_depth=3, eta=0.3, base_score=0.25, seed=5), y_prob, 20),
]
for name, params, y, rounds in specs:
    booster = xgb.train(params, xgb.DMatrix(Xtr, label=y), num_boost_round=rounds)
    booster.save_model(os.path.join(OUT, name + '.json'))
    booster.save_model(os.path.join(OUT, name + '.ubj'))
    booster.save_model(os.path.join(OUT, name + '.bin'))  # legacy binary, "binf" header
    d = xgb.DMatrix(Xte)
    margin = booster.predict(d, output_margin=True).reshape(len(Xte), -1)
    pred = booster.predict(d).reshape(len(Xte), -1)
    np.savetxt(os.path.join(OUT, name + '.X.csv'), Xte, delimiter=',', fmt='%.9g')
    with open(os.path.join(OUT, name + '.expected.json'), 'w') as f:
        json.dump({'model': name, 'objective': params['objective'], 'booster': params.get('booster', 'gbtree'),
                   'rows': len(Xte), 'outputs': margin.shape[1], 'value_outputs': pred.shape[1],
                   'margin': margin.astype(float).tolist(), 'prediction': pred.astype(float).tolist(),
                   'xgboost_version': xgb.__version__}, f)
    print(name, margin.shape, pred.shape)
