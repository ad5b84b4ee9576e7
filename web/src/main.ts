// The console's entry (bundled to dist/web/console.js): mounts the app on #app.
import { ConsoleApp } from './console-app.js';
import { TokenStore } from './token-store.js';

const root = document.getElementById('app');
if (root) void new ConsoleApp(root, new TokenStore(), location.origin).start();
