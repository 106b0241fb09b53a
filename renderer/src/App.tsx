import { useEffect } from 'react';
import { bootstrapConsole } from './bootstrap';
import { useKeyboardShortcuts } from './hooks/useKeyboardShortcuts';
import { CalibrationPanel } from './panels/CalibrationPanel';
import { ClipInfo } from './panels/ClipInfo';
import { ClipPanel } from './panels/ClipPanel';
import { ConnectionsPanel } from './panels/ConnectionsPanel';
import { ErrorBanner } from './panels/ErrorBanner';
import { GapReviewPanel } from './panels/GapReviewPanel';
import { JointTable } from './panels/JointTable';
import { PolicyPanel } from './panels/PolicyPanel';
import { QualificationBoard } from './panels/QualificationBoard';
import { RunsPanel } from './panels/RunsPanel';
import { SimPanel } from './panels/SimPanel';
import { Timeline } from './panels/Timeline';
import { TrialRunnerPanel } from './panels/TrialRunnerPanel';
import { TopBar } from './panels/TopBar';
import { startPlaybackLoop } from './playback/playback';
import { useConnectionStore } from './stores/connectionStore';
import { startEndpointsPolling } from './stores/endpointsStore';
import { startOverlayEngine } from './stores/runStore';
import { Viewport } from './viewport/Viewport';

function Unavailable() {
  const detail = useConnectionStore((s) => s.detail);
  return (
    <div className="unavailable">
      <h1>Not connected to the MotionBench services</h1>
      <p>{detail}</p>
    </div>
  );
}

export function App() {
  useEffect(() => bootstrapConsole(), []);
  useEffect(() => startPlaybackLoop(), []);
  useEffect(() => startOverlayEngine(), []);
  const connected = useConnectionStore((s) => s.status === 'connected');
  useEffect(() => (connected ? startEndpointsPolling() : undefined), [connected]);
  useKeyboardShortcuts();
  const unavailable = useConnectionStore((s) => s.status === 'unavailable');

  return (
    <div className="app">
      <TopBar />
      <ErrorBanner />
      {unavailable ? (
        <Unavailable />
      ) : (
        <div className="workspace">
          <aside className="sidebar">
            <ClipPanel />
            <ClipInfo />
            <PolicyPanel />
            <JointTable />
          </aside>
          <main className="center">
            <Viewport />
            <Timeline />
            <QualificationBoard />
            <GapReviewPanel />
          </main>
          <aside className="sidebar sidebar-right">
            <ConnectionsPanel />
            <TrialRunnerPanel />
            <CalibrationPanel />
            <SimPanel />
            <RunsPanel />
          </aside>
        </div>
      )}
    </div>
  );
}
