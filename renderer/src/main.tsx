import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { App } from './app/App';
import { installTestHooks } from './testing/testHooks';
import './styles.css';

// The end-to-end build (electron.vite.config.ts) installs the test hooks; in the production build
// the constant is false and the bundler leaves the hooks out.
if (__MOTIONBENCH_TEST_HOOKS__) installTestHooks();
createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <App />
  </StrictMode>,
);
