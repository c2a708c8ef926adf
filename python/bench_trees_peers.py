#!/usr/bin/env python3
"""Tree-tier peers for bench/trees-predict.ts --peers (tooling only; python/requirements-trees.txt).

    python/.venv/bin/python python/bench_trees_peers.py make DIR [--trees 500 --depth 6 --features 32 --rows 1000]
    python/.venv/bin/python python/bench_trees_peers.py time DIR --sizes 1,20,100,1000 --seconds 1

`make` trains one LightGBM binary model on fixture-style data (scripts/make-lightgbm-fixtures.py:
float32 features, a hidden signal on a few, 8 % NaN, one integer-valued and one binary feature)
and writes everything the engines need, all from that one model:
  model.txt          LightGBM text model (ours, LightGBM C API / Python, lleaves, Treelite), as
                     LightGBM saved it (its `inf` "present vs missing" thresholds included)
  model.xgb.json     the same trees as an XGBoost 3.x JSON model (XGBoost C API / inplace_predict):
                     LightGBM's float64 `x <= t` becomes XGBoost's float32 `x < next float32 above
                     the largest float32 <= t`, which is the same test for every float32 input;
                     NaN follows default_left. Leaf values become float32 (XGBoost's storage).
  rows.f32           the bench rows: raw little-endian float32, row-major, NaN = missing
  tl2cgen.so         Treelite 4 -> TL2cgen generated C, compiled with gcc -O2 (params below)
  lleaves.o          lleaves' LLVM-compiled object (cache of lleaves.Model.compile)
  meta.json          shapes, versions, compile settings

`time` loads the Python peers, checks each one's `predict()` values against LightGBM's own on the
largest batch, then times one call per sample exactly as the TypeScript and C harnesses do (20
warm-up calls, then calls until SECONDS have passed and at least 50 were made; median and p99 of
the per-call times in µs) and prints JSON. All peers run with one thread.
"""
import argparse
import json
import math
import os
import platform
import sys
import time

import numpy as np

F_DEFAULT = 32


def matrix(rng, n, f, missing=0.08):
    X = rng.normal(size=(n, f)).astype(np.float32)
    X[:, 3] = rng.integers(0, 4, size=n)
    X[:, 5] = rng.integers(0, 2, size=n)
    X[rng.random(size=X.shape) < missing] = np.nan
    return X


def signal(X):
    z = np.nan_to_num(X)
    return (z[:, 0] + 0.5 * z[:, 1] - 0.3 * z[:, 3] + 0.4 * z[:, 5] * z[:, 2] + 0.2 * np.sin(3 * z[:, 4])
            + 0.3 * z[:, 6] * z[:, 7] - 0.2 * np.abs(z[:, 8]) + 0.1 * z[:, 9] ** 2)


def xgb_threshold(t):
    """XGBoost split_condition s (float32, x < s goes left) equivalent to LightGBM's x <= t (float64)."""
    with np.errstate(over='ignore'):  # an inf or above-FLT_MAX threshold stays inf in float32
        below = np.float32(t)
        if float(below) > t:
            below = np.nextafter(below, np.float32(-np.inf))
        return float(np.nextafter(below, np.float32(np.inf)))


def to_xgboost_json(dump, num_feature):
    """LightGBM dump_model() -> XGBoost 3.x JSON model (binary objective, sigmoid 1, no base margin)."""
    trees = []
    for ti, tree in enumerate(dump['tree_info']):
        # Breadth-first, children allocated as a consecutive pair (right = left + 1), as XGBoost
        # itself lays trees out: XGBoost 3.x's small-batch predictor relies on it.
        nodes = [tree['tree_structure']]
        parents = [2147483647]
        left, right, split_idx, split_cond, default_left = [], [], [], [], []
        i = 0
        while i < len(nodes):
            node = nodes[i]
            if 'split_feature' in node:
                if node['decision_type'] != '<=' or node['missing_type'] != 'NaN':
                    raise SystemExit(f"cannot convert split {node['decision_type']} / missing {node['missing_type']}")
                left.append(len(nodes))
                right.append(len(nodes) + 1)
                nodes += [node['left_child'], node['right_child']]
                parents += [i, i]
                split_idx.append(node['split_feature'])
                split_cond.append(xgb_threshold(float(node['threshold'])))
                default_left.append(1 if node['default_left'] else 0)
            else:
                left.append(-1)
                right.append(-1)
                split_idx.append(0)
                split_cond.append(float(np.float32(node['leaf_value'])))
                default_left.append(0)
            i += 1
        n = len(left)
        trees.append({
            'base_weights': [0.0] * n, 'categories': [], 'categories_nodes': [], 'categories_segments': [],
            'categories_sizes': [], 'default_left': default_left, 'id': ti, 'left_children': left,
            'loss_changes': [0.0] * n, 'parents': parents, 'right_children': right, 'split_conditions': split_cond,
            'split_indices': split_idx, 'split_type': [0] * n, 'sum_hessian': [0.0] * n,
            'tree_param': {'num_deleted': '0', 'num_feature': str(num_feature), 'num_nodes': str(n),
                           'size_leaf_vector': '1'},
        })
    nt = len(trees)
    return {'learner': {
        'attributes': {}, 'feature_names': [], 'feature_types': [],
        'gradient_booster': {'model': {
            'cats': {'enc': [], 'feature_segments': [], 'sorted_idx': []},
            'gbtree_model_param': {'num_parallel_tree': '1', 'num_trees': str(nt)},
            'iteration_indptr': list(range(nt + 1)), 'tree_info': [0] * nt, 'trees': trees}, 'name': 'gbtree'},
        'learner_model_param': {'base_score': '[5E-1]', 'boost_from_average': '0', 'num_class': '0',
                                'num_feature': str(num_feature), 'num_target': '1'},
        'objective': {'name': 'binary:logistic', 'reg_loss_param': {'scale_pos_weight': '1'}}},
        'version': [3, 2, 0]}


def make(args):
    import lightgbm as lgb
    import lleaves
    import tl2cgen
    import treelite
    import xgboost as xgb

    os.makedirs(args.dir, exist_ok=True)
    rng = np.random.default_rng(39)
    f = args.features
    Xtr = matrix(rng, 20000, f)
    y = (signal(Xtr) + rng.normal(scale=0.5, size=len(Xtr)) > 0).astype(np.float64)
    params = dict(objective='binary', num_leaves=2 ** args.depth - 1, max_depth=args.depth, learning_rate=0.05,
                  min_data_in_leaf=20, seed=7, deterministic=True, force_row_wise=True, num_threads=2, verbose=-1)
    model_txt = os.path.join(args.dir, 'model.txt')
    # Each artifact is rebuilt only when missing (delete DIR to start over; --trees etc. need that).
    if os.path.exists(model_txt):
        b = lgb.Booster(model_file=model_txt)
    else:
        t0 = time.time()
        b = lgb.train(params, lgb.Dataset(Xtr, label=y), num_boost_round=args.trees)
        b.save_model(model_txt)
        print(f'trained {b.num_trees()} trees in {time.time() - t0:.1f}s -> {model_txt}', file=sys.stderr)

    X = matrix(rng, args.rows, f)
    X.tofile(os.path.join(args.dir, 'rows.f32'))

    dump = b.dump_model()
    leaves = [t['num_leaves'] for t in dump['tree_info']]
    xgb_path = os.path.join(args.dir, 'model.xgb.json')
    with open(xgb_path, 'w') as fh:
        json.dump(to_xgboost_json(dump, f), fh)
    xb = xgb.Booster(model_file=xgb_path)
    xb.set_param({'nthread': 1})
    ref = b.predict(X.astype(np.float64))
    # Every batch size: XGBoost picks a different code path for small batches.
    d_xgb = max(float(np.max(np.abs(xb.inplace_predict(X[:n]) - ref[:n]))) for n in (1, 2, 20, 100, len(X)))
    print(f'xgboost conversion: max |diff| vs lightgbm {d_xgb:.2e}', file=sys.stderr)

    tl_params = {'parallel_comp': 8}
    tl_s = ll_s = None
    if not os.path.exists(os.path.join(args.dir, 'tl2cgen.so')):
        t0 = time.time()
        tl_model = treelite.frontend.load_lightgbm_model(model_txt)
        tl2cgen.export_lib(tl_model, toolchain='gcc', libpath=os.path.join(args.dir, 'tl2cgen.so'), params=tl_params,
                           nthread=2, options=['-O2'])
        tl_s = time.time() - t0
    if not os.path.exists(os.path.join(args.dir, 'lleaves.o')):
        t0 = time.time()
        lleaves.Model(model_file=model_txt).compile(cache=os.path.join(args.dir, 'lleaves.o'))
        ll_s = time.time() - t0
    print(f'tl2cgen compile {tl_s} s, lleaves compile {ll_s} s (None: reused)', file=sys.stderr)
    meta_path = os.path.join(args.dir, 'meta.json')
    old = {}
    if os.path.exists(meta_path):
        with open(meta_path) as fh:
            old = json.load(fh)
    tl_s = old.get('tl2cgen_compile_s') if tl_s is None else tl_s
    ll_s = old.get('lleaves_compile_s') if ll_s is None else ll_s
    meta = {'trees': b.num_trees(), 'features': f, 'rows': args.rows, 'depth': args.depth,
            'leaves_mean': float(np.mean(leaves)), 'leaves_total': int(np.sum(leaves)), 'objective': 'binary',
            'xgboost_conversion_max_diff': d_xgb, 'tl2cgen_params': tl_params, 'tl2cgen_options': ['-O2'],
            'tl2cgen_compile_s': tl_s, 'lleaves_compile_s': ll_s, 'versions': versions()}
    with open(meta_path, 'w') as fh:
        json.dump(meta, fh, indent=1)
    print(json.dumps(meta))


def versions():
    import lightgbm
    import lleaves  # noqa: F401
    import llvmlite
    import tl2cgen
    import treelite
    import xgboost
    from importlib.metadata import version
    return {'python': platform.python_version(), 'numpy': np.__version__, 'lightgbm': lightgbm.__version__,
            'xgboost': xgboost.__version__, 'treelite': treelite.__version__, 'tl2cgen': tl2cgen.__version__,
            'lleaves': version('lleaves'), 'llvmlite': llvmlite.__version__}


def time_calls(fn, seconds):
    for _ in range(20):
        fn()
    samples = []
    budget = int(seconds * 1e9)
    clock = time.perf_counter_ns
    start = clock()
    while True:
        t0 = clock()
        fn()
        t1 = clock()
        samples.append((t1 - t0) / 1000)
        if len(samples) >= 50 and t1 - start > budget:
            break
    samples.sort()
    return {'medianUs': samples[len(samples) // 2],
            'p99Us': samples[min(len(samples) - 1, math.floor(len(samples) * 0.99))], 'calls': len(samples)}


def time_peers(args):
    import lightgbm as lgb
    import lleaves
    import tl2cgen
    import xgboost as xgb

    with open(os.path.join(args.dir, 'meta.json')) as fh:
        meta = json.load(fh)
    f = meta['features']
    X = np.fromfile(os.path.join(args.dir, 'rows.f32'), dtype=np.float32).reshape(-1, f)
    sizes = [int(s) for s in args.sizes.split(',')]
    model_txt = os.path.join(args.dir, 'model.txt')

    lgbm = lgb.Booster(model_file=model_txt)
    xb = xgb.Booster(model_file=os.path.join(args.dir, 'model.xgb.json'))
    xb.set_param({'nthread': 1})
    ll = lleaves.Model(model_file=model_txt)
    ll.compile(cache=os.path.join(args.dir, 'lleaves.o'))
    tl = tl2cgen.Predictor(os.path.join(args.dir, 'tl2cgen.so'), nthread=1)

    # Every peer gets the same float32 rows, as a caller holding float32 features would pass them;
    # each converts as it does by itself (LightGBM and lleaves read float64).
    engines = {
        'xgboost-py': lambda x: xb.inplace_predict(x),
        'lightgbm-py': lambda x: lgbm.predict(x, num_threads=1),
        'lleaves': lambda x: ll.predict(x, n_jobs=1),
        'tl2cgen-py': lambda x: tl.predict(tl2cgen.DMatrix(x)).reshape(-1),
    }
    biggest = X[:max(sizes)]
    ref = lgbm.predict(biggest.astype(np.float64), num_threads=1)
    checks = {name: float(np.max(np.abs(np.asarray(fn(biggest), dtype=np.float64).reshape(-1) - ref)))
              for name, fn in engines.items()}
    results = {name: [] for name in engines}
    for n in sizes:
        x = np.ascontiguousarray(X[:n])
        for name, fn in engines.items():
            results[name].append({'rows': n, **time_calls(lambda: fn(x), args.seconds)})
    print(json.dumps({'versions': versions(), 'checkRows': len(biggest), 'maxAbsDiffVsLightgbm': checks,
                      'results': results}))


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest='cmd', required=True)
    m = sub.add_parser('make')
    m.add_argument('dir')
    m.add_argument('--trees', type=int, default=500)
    m.add_argument('--depth', type=int, default=6)
    m.add_argument('--features', type=int, default=F_DEFAULT)
    m.add_argument('--rows', type=int, default=1000)
    t = sub.add_parser('time')
    t.add_argument('dir')
    t.add_argument('--sizes', default='1,20,100,1000')
    t.add_argument('--seconds', type=float, default=1.0)
    args = p.parse_args()
    make(args) if args.cmd == 'make' else time_peers(args)


if __name__ == '__main__':
    main()
