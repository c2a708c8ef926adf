/**
 * The layers of src/, lowest first. A module may import its own layer and the layers below it,
 * never one above: CI runs `npm run layers` and fails on any violation.
 *   base      errors, types, signals, util, scoring, calibration, operating-points (what every layer shares)
 *   native    the addon loader
 *   features  lexical features over the addon
 *   tiers     scorers: fast-path, cross-encoder, llm-judge
 *   cache     the score cache
 *   composite one tier assembled from several scorers (signals merged, cached per member)
 *   router    the tier router
 *   gate      createGate and its policies
 *   context   prompt context from a gate result
 *   decision-log  the decision log, its replay through the gate, drift figures
 *   surfaces  adapters (LangChain, AI SDK) and the HTTP server
 *   tooling   src/tooling/: eval, training, loadgen (load generation), report (charts),
 *             model-gen (the ONNX test-model generator), model-import (Hugging Face folder → ONNX)
 *   cli       the command line, on top of everything
 */
const BASE = '^src/(errors|types|signals)\\.ts$|^src/(util|scoring|calibration|operating-points)/';
const NATIVE = '^src/native/';
const FEATURES = '^src/features/';
const TIERS = '^src/tiers/';
const CACHE = '^src/cache/';
const COMPOSITE = '^src/composite/';
const ROUTER = '^src/router/';
const GATE = '^src/gate/';
const CONTEXT = '^src/context/';
const DECISION_LOG = '^src/decision-log/';
const SURFACES = '^src/(adapters|server)/';
const TOOLING = '^src/tooling/';
const CLI = '^src/cli/';
const ROOT = '^src/index\\.ts$';

const below = (...layers) => layers.join('|');
const layer = (name, from, allowed) => ({
  name,
  comment: `${name} may import only: ${allowed}`,
  severity: 'error',
  from: { path: from },
  to: { path: '^src/', pathNot: allowed },
});

module.exports = {
  forbidden: [
    layer('base-imports-up', BASE, BASE),
    layer('native-imports-up', NATIVE, below(BASE, NATIVE)),
    layer('features-import-up', FEATURES, below(BASE, NATIVE, FEATURES)),
    layer('tiers-import-up', TIERS, below(BASE, NATIVE, FEATURES, TIERS)),
    layer('cache-imports-up', CACHE, below(BASE, NATIVE, FEATURES, TIERS, CACHE)),
    layer('composite-imports-up', COMPOSITE, below(BASE, NATIVE, FEATURES, TIERS, CACHE, COMPOSITE)),
    layer('router-imports-up', ROUTER, below(BASE, NATIVE, FEATURES, TIERS, CACHE, COMPOSITE, ROUTER)),
    layer('gate-imports-up', GATE, below(BASE, NATIVE, FEATURES, TIERS, CACHE, COMPOSITE, ROUTER, GATE)),
    layer('context-imports-up', CONTEXT, below(BASE, NATIVE, FEATURES, TIERS, CACHE, COMPOSITE, ROUTER, GATE, CONTEXT)),
    layer('decision-log-imports-up', DECISION_LOG, below(BASE, NATIVE, FEATURES, TIERS, CACHE, COMPOSITE, ROUTER, GATE, CONTEXT, DECISION_LOG)),
    layer('root-exports-runtime-only', ROOT, below(BASE, NATIVE, FEATURES, TIERS, CACHE, COMPOSITE, ROUTER, GATE, CONTEXT)),
    layer('surfaces-import-cli-or-tooling', SURFACES, below(BASE, NATIVE, FEATURES, TIERS, CACHE, COMPOSITE, ROUTER, GATE, CONTEXT, DECISION_LOG, SURFACES, ROOT)),
    layer('tooling-imports-cli-or-surfaces', TOOLING, below(BASE, NATIVE, FEATURES, TIERS, CACHE, COMPOSITE, ROUTER, GATE, CONTEXT, DECISION_LOG, TOOLING, ROOT)),
    {
      name: 'no-circular',
      severity: 'error',
      from: { path: '^src/' },
      to: { circular: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default', 'types'] },
  },
};
