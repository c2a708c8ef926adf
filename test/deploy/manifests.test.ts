/**
 * The deployment files (docs/deploy.md) hold what the recipe promises: deploy/kubernetes.yaml
 * parses and has a Deployment with readiness on /health/ready and liveness on /health/live, a
 * Service onto its port, an autoscaler on a metric the server exports and a disruption budget, all
 * selecting the same pods; deploy/Dockerfile runs `serve` on 0.0.0.0 as a non-root user with a
 * health check on /health/ready and copies only paths that exist. No cluster or image builder runs
 * here: this checks structure, not a server's admission of the objects.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
// `yaml` is in node_modules through vite and @langchain/classic (both devDependencies).
import { parseAllDocuments } from 'yaml';
import { packageRoot } from '../../src/util/package-root.js';

const root = packageRoot();
// biome-ignore lint/suspicious/noExplicitAny: parsed YAML, checked field by field below
type Doc = Record<string, any>;

function manifests(): Doc[] {
  const docs = parseAllDocuments(readFileSync(join(root, 'deploy', 'kubernetes.yaml'), 'utf8'));
  for (const doc of docs) expect(doc.errors, String(doc.errors)).toEqual([]);
  return docs.map((d) => d.toJS() as Doc);
}

describe('deploy/kubernetes.yaml', () => {
  const docs = manifests();
  const byKind = (kind: string): Doc => {
    const found = docs.filter((d) => d.kind === kind);
    expect(found, kind).toHaveLength(1);
    return found[0]!;
  };

  it('has the four objects with their API versions', () => {
    expect(docs.map((d) => `${d.apiVersion} ${d.kind}`).sort()).toEqual([
      'apps/v1 Deployment',
      'autoscaling/v2 HorizontalPodAutoscaler',
      'policy/v1 PodDisruptionBudget',
      'v1 Service',
    ]);
    for (const d of docs) expect(d.metadata?.name).toBe('relevance-gate');
  });

  it('Deployment: probes on /health/ready and /health/live, the port, labels its selector matches', () => {
    const deployment = byKind('Deployment');
    const labels = deployment.spec.template.metadata.labels;
    for (const [k, v] of Object.entries(deployment.spec.selector.matchLabels)) expect(labels[k]).toBe(v);
    const [container] = deployment.spec.template.spec.containers;
    expect(container.readinessProbe.httpGet).toEqual({ path: '/health/ready', port: 'http' });
    expect(container.livenessProbe.httpGet).toEqual({ path: '/health/live', port: 'http' });
    expect(container.ports).toContainEqual({ name: 'http', containerPort: 8080, protocol: 'TCP' });
    const env = Object.fromEntries(container.env.map((e: Doc) => [e.name, e.value]));
    expect(env.RELEVANCE_GATE_HOST).toBe('0.0.0.0');
    expect(env.RELEVANCE_GATE_PORT).toBe('8080');
    expect(deployment.spec.template.spec.securityContext.runAsNonRoot).toBe(true);
  });

  it('Service, HPA and PDB point at the Deployment and its pods', () => {
    const deployment = byKind('Deployment');
    const labels = deployment.spec.template.metadata.labels;
    const service = byKind('Service');
    for (const [k, v] of Object.entries(service.spec.selector)) expect(labels[k]).toBe(v);
    expect(service.spec.ports[0].targetPort).toBe('http');
    const hpa = byKind('HorizontalPodAutoscaler');
    expect(hpa.spec.scaleTargetRef).toEqual({ apiVersion: 'apps/v1', kind: 'Deployment', name: 'relevance-gate' });
    expect(hpa.spec.minReplicas).toBeGreaterThanOrEqual(2);
    const [metric] = hpa.spec.metrics;
    expect(metric.type).toBe('Pods');
    // A gauge the server exports (docs/server.md, Metrics; prefix relevance_gate_).
    expect(metric.pods.metric.name).toBe('relevance_gate_http_requests_in_flight');
    expect(readFileSync(join(root, 'docs', 'server.md'), 'utf8')).toContain('| `http_requests_in_flight` | gauge |');
    const pdb = byKind('PodDisruptionBudget');
    for (const [k, v] of Object.entries(pdb.spec.selector.matchLabels)) expect(labels[k]).toBe(v);
    expect(pdb.spec.minAvailable).toBeLessThan(hpa.spec.minReplicas);
  });
});

describe('deploy/Dockerfile', () => {
  const text = readFileSync(join(root, 'deploy', 'Dockerfile'), 'utf8');
  const instructions = text
    .replace(/\\\n/g, ' ')
    .split('\n')
    .filter((l) => /^[A-Z]+\s/.test(l));

  it('node:20-slim, non-root, EXPOSE, HEALTHCHECK on /health/ready, serve on 0.0.0.0', () => {
    expect(instructions.filter((l) => l.startsWith('FROM ')).every((l) => l.startsWith('FROM node:20-slim'))).toBe(
      true,
    );
    expect(instructions).toContain('USER node');
    expect(instructions).toContain('EXPOSE 8080');
    expect(instructions.find((l) => l.startsWith('HEALTHCHECK '))).toContain('/health/ready');
    expect(instructions.at(-1)).toBe('CMD ["node", "dist/cli/main.js", "serve", "--host", "0.0.0.0"]');
    expect(text).toContain('npm ci --omit=dev');
    expect(text).toContain('ONNXRUNTIME_NODE_INSTALL=skip');
  });

  it('copies only paths that exist in the repository', () => {
    for (const line of instructions.filter((l) => l.startsWith('COPY ') && !l.includes('--from='))) {
      const parts = line.split(/\s+/).slice(1, -1);
      for (const path of parts) expect(existsSync(join(root, path)), path).toBe(true);
    }
  });

  it('deployment files are not part of the npm package', () => {
    const files = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).files as string[];
    expect(files.some((f) => f.startsWith('deploy'))).toBe(false);
  });
});
