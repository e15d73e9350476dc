/**
 * Import rules for the whole codebase, checked by `npm run lint`. Shipped code (src/, functions/, bin/ and build/)
 * never reaches into the local stand-ins, the tests or the deployment, benchmarks never reach into the tests, the
 * domain folders never import the composition roots in src/app/, slack/ and alerts/ reach the workflow only through
 * its API, the rest of calmops reaches the triage only through its entries, no analyzer imports another, and no module
 * imports itself back through others.
 * @type {import('dependency-cruiser').IConfiguration}
 */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'A cycle means two modules can only be understood, tested and bundled together.',
      from: {},
      to: { circular: true },
    },
    {
      name: 'shipped-code-not-from-local',
      severity: 'error',
      comment:
        'local/ holds the stand-ins for AWS, Slack and clusters; what ships (the functions, and the calmops command ' +
        'with the bundler and loader it runs from) must not depend on them.',
      from: { path: '^(src|functions|bin|build)/' },
      to: { path: '^local/' },
    },
    {
      name: 'shipped-code-not-from-cdk',
      severity: 'error',
      comment:
        'cdk/ deploys what src/ builds and copies files out of it (the EKS token helper, the templates); an import ' +
        'the other way would tie the product to its deployment and close a loop between the two folders.',
      from: { path: '^(src|functions|bin|build)/' },
      to: { path: '^cdk/' },
    },
    {
      name: 'domain-not-from-app',
      severity: 'error',
      comment: 'src/app/ composes the domain folders into the functions; the domain folders never reach back into it.',
      from: { path: '^src/', pathNot: '^src/app/' },
      to: { path: '^src/app/' },
    },
    {
      name: 'workflow-through-its-api',
      severity: 'error',
      comment:
        'slack/ and alerts/ start sessions, deliver input and decide approvals through what the workflow offers ' +
        '(src/workflow/api.ts), never through its steps or its dependencies.',
      from: { path: '^src/(slack|alerts)/' },
      to: { path: '^src/workflow/', pathNot: '^src/workflow/api\\.[jt]s$' },
    },
    {
      name: 'alerts-not-from-slack',
      severity: 'error',
      comment: "The alert route opens sessions through the workflow's API; Slack's handlers are another caller of it.",
      from: { path: '^src/alerts/' },
      to: { path: '^src/slack/' },
    },
    {
      name: 'analyzers-independent',
      severity: 'error',
      comment:
        'Each analyzer in src/triage/analyze/ is one concern behind the Analyzer interface; what two analyzers share is ' +
        'a fact about Kubernetes objects and lives in src/triage/kube/. Only the registry (analyze/index.ts) lists them.',
      from: { path: '^src/triage/analyze/', pathNot: '^src/triage/analyze/index\\.[jt]s$' },
      to: { path: '^src/triage/analyze/', pathNot: '^src/triage/analyze/analyzer\\.[jt]s$' },
    },
    {
      name: 'triage-through-its-entries',
      severity: 'error',
      comment:
        "The rest of calmops reaches the triage through src/triage/index.ts or a stage folder's index.ts (route, " +
        'gather, analyze, kube, rank, envelope, templates), never through the modules behind them.',
      from: { path: '^(src|functions|bin|build|local|bench|cdk)/', pathNot: '^src/triage/' },
      to: {
        path: '^src/triage/',
        pathNot: '^src/triage/((route|gather|analyze|kube|rank|envelope|templates)/)?index\\.[jt]s$',
      },
    },
    {
      name: 'dynamodb-only-in-store',
      severity: 'error',
      comment: 'Every DynamoDB access is a repository in src/store/; src/app/ only builds the client.',
      from: { path: '^src/', pathNot: '^src/(store|app)/' },
      to: { path: 'node_modules/@aws-sdk/(client-dynamodb|lib-dynamodb)/' },
    },
    {
      name: 'step-functions-only-in-app',
      severity: 'error',
      comment: 'The workflow reaches Step Functions through its WorkflowEngine port, implemented in src/app/.',
      from: { path: '^src/', pathNot: '^src/app/' },
      to: { path: 'node_modules/@aws-sdk/client-sfn/' },
    },
    {
      name: 'no-tests-in-product',
      severity: 'error',
      comment: 'Test and benchmark code is not part of the product.',
      from: { path: '^(src|functions|bin|build|cdk|local)/' },
      to: { path: '^(test|bench)/' },
    },
    {
      name: 'declared-packages-only',
      severity: 'error',
      comment:
        'A package that is only in node_modules because something else needs it (yaml, for one) can vanish with that ' +
        'dependency: import only what package.json names.',
      from: {},
      to: { dependencyTypes: ['npm-no-pkg', 'npm-unknown'] },
    },
    {
      name: 'bench-not-from-test',
      severity: 'error',
      comment:
        'Benchmarks and the eval run without the test suite; what both use lives in bench/support/, which tests import.',
      from: { path: '^bench/' },
      to: { path: '^test/' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default'] },
  },
};
