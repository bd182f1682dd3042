// Lint limits: strict type-aware rules, no non-null assertions, no floating promises.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  // hack/'s TypeScript at the top (bench-readme.ts) is linted as bench/ is; its shell, Go and demo are not.
  { ignores: ['dist/**', 'node_modules/**', '.cache/**', 'hack/**/*', '!hack/*.ts', 'bin/**', 'eslint.config.mjs'] },
  js.configs.recommended,
  ...tseslint.configs.strictTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-non-null-assertion': 'error',
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/restrict-template-expressions': ['error', { allowNumber: true, allowBoolean: true }],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/no-unnecessary-condition': 'off',
      '@typescript-eslint/no-confusing-void-expression': 'off',
      '@typescript-eslint/no-extraneous-class': 'off',
      'max-lines': ['warn', { max: 800, skipBlankLines: true, skipComments: true }],
      complexity: ['error', 20],
    },
  },
  {
    // One YAML reader (util/yaml.ts, its rule in util/yaml-values.ts): aliases as Go reads them,
    // an alias bomb refused by name. The yaml package's parse/toJS stop at 100 aliases.
    files: ['src/**/*.ts'],
    ignores: ['src/util/yaml.ts', 'src/util/yaml-values.ts', '**/*.test.ts', '**/*.test-helper.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          paths: [
            { name: 'yaml', importNames: ['parse', 'parseDocument', 'parseAllDocuments'], message: 'read YAML with util/yaml.ts: readYaml, readYamlAll, or yamlPackage().parseDocument then yamlValue.' },
            { name: 'js-yaml', message: 'only util/yaml.ts reads with js-yaml.' },
            // util/node-http.ts says why.
            ...['node:http', 'http'].map((name) => ({ name, allowTypeImports: true, message: 'take node:http from util/node-http.ts: on Node 24 an ES import of it loads undici in every process.' })),
          ],
        },
      ],
      'no-restricted-syntax': [
        'error',
        { selector: "CallExpression[callee.property.name=/^(toJS|toJSON)$/][arguments.length<=1]", message: 'a YAML document becomes values through yamlValue (util/yaml.ts), not toJS/toJSON.' },
        { selector: "ImportExpression[source.value=/^(node:)?http$/]", message: 'take node:http from util/node-http.ts: on Node 24 an ES import of it loads undici in every process.' },
      ],
    },
  },
  {
    // Outbound HTTP goes through util/http-request.ts (node:http(s)), which says why not fetch:
    // undici loaded whole at the first call, web streams, a reconnect loop behind some proxies.
    // The console's page runs in a browser, where fetch is the only way.
    files: ['src/**/*.ts'],
    ignores: ['src/console/web/**', '**/*.test.ts', '**/*.test-helper.ts'],
    rules: {
      'no-restricted-globals': ['error', { name: 'fetch', message: 'send requests with httpRequest (util/http-request.ts), not fetch.' }],
      'no-restricted-properties': [
        'error',
        { object: 'globalThis', property: 'fetch', message: 'send requests with httpRequest (util/http-request.ts), not fetch.' },
        { object: 'global', property: 'fetch', message: 'send requests with httpRequest (util/http-request.ts), not fetch.' },
      ],
    },
  },
  {
    // KubeConfig comes through kube/kube-config.ts: the built CLI loads a bundle of it alone, not
    // the whole package (60 MiB and 0.4 s of generated API).
    files: ['src/**/*.ts'],
    ignores: ['src/kube/kube-config.ts', 'src/kube/kube-config-bundle.ts', '**/*.test.ts', '**/*.test-helper.ts'],
    rules: {
      'no-restricted-imports': ['error', { paths: [{ name: '@kubernetes/client-node', message: 'import KubeConfig from kube/kube-config.ts.' }] }],
    },
  },
  {
    // Tests run over the one fake cluster (src/kube/fake-cluster.test-helper.ts), or hand the code
    // a stand-in typed as exactly the port it takes: a client is never faked by casting an object
    // to it, and malformed input is built as `unknown` for a function that takes `unknown`.
    files: ['**/*.test.ts', '**/*.test-helper.ts', 'test/**/*.ts'],
    rules: {
      'no-restricted-syntax': [
        'error',
        {
          selector: "TSAsExpression > TSAsExpression.expression[typeAnnotation.type='TSUnknownKeyword'], TSTypeAssertion > TSTypeAssertion.expression[typeAnnotation.type='TSUnknownKeyword']",
          message: 'no `x as unknown as T` in tests: run the code over the one fake cluster (src/kube/fake-cluster.test-helper.ts; extend it, with a test, when it lacks something), or type a stand-in as exactly the port the code takes (Pick<ObjectReader, "find">).',
        },
        {
          selector: "TSAsExpression[typeAnnotation.type='TSNeverKeyword'], TSTypeAssertion[typeAnnotation.type='TSNeverKeyword']",
          message: 'no `x as never` in tests: run the code over the one fake cluster (src/kube/fake-cluster.test-helper.ts), type a stand-in as the port it takes, or pass malformed input as `unknown` to what checks it.',
        },
      ],
    },
  },
  {
    // Test files keep the old bound until their own refactor (duplicates into shared helpers) lands.
    files: ['**/*.test.ts', '**/*.test-helper.ts'],
    rules: { complexity: ['error', 24] },
  },
  {
    files: ['**/*.test.ts', 'test/**/*.ts', 'bench/**/*.ts', 'hack/*.ts'],
    rules: {
      '@typescript-eslint/no-floating-promises': 'off',
      '@typescript-eslint/no-non-null-assertion': 'off',
    },
  },
);
