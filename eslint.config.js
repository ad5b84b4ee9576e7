// Lint configuration: typescript-eslint recommended rules over src, test, bench and scripts.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

// eslint loads the default export of its config file.
// eslint-disable-next-line no-restricted-syntax
export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', '.a3s/**', 'coverage/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: {
      globals: {
        process: 'readonly',
        console: 'readonly',
        setTimeout: 'readonly',
        clearTimeout: 'readonly',
        setInterval: 'readonly',
        clearInterval: 'readonly',
        Buffer: 'readonly',
        URL: 'readonly',
        AbortController: 'readonly',
        AbortSignal: 'readonly',
        TextEncoder: 'readonly',
        TextDecoder: 'readonly',
        fetch: 'readonly',
        queueMicrotask: 'readonly',
        setImmediate: 'readonly',
        structuredClone: 'readonly',
      },
    },
    rules: {
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-restricted-syntax': ['error', { selector: 'ExportDefaultDeclaration', message: 'Use named exports.' }],
    },
  },
  {
    // The console builds DOM through web/src/el.ts only: nothing a model, tool or tenant wrote is parsed as HTML.
    files: ['web/**/*.ts'],
    rules: {
      'no-restricted-syntax': [
        'error',
        { selector: 'ExportDefaultDeclaration', message: 'Use named exports.' },
        {
          selector:
            'Identifier[name=/^(innerHTML|outerHTML|insertAdjacentHTML|createContextualFragment|parseFromString)$/]',
          message: 'Build DOM with el() (web/src/el.ts); HTML strings are never parsed in the console.',
        },
        {
          selector:
            'Literal[value=/^(innerHTML|outerHTML|insertAdjacentHTML|createContextualFragment|parseFromString)$/]',
          message: 'Build DOM with el() (web/src/el.ts); HTML strings are never parsed in the console.',
        },
        {
          selector: 'MemberExpression[object.name="document"][property.name=/^(write|writeln)$/]',
          message: 'document.write parses HTML; build DOM with el() (web/src/el.ts).',
        },
      ],
    },
  },
);
