import { useEffect } from 'react';
import { useConnectionStore } from '../api/connectionStore';
import { CalibrationPanel } from '../calibration/CalibrationPanel';
import { ClipInfo } from '../clips/ClipInfo';
import { ClipPanel } from '../clips/ClipPanel';
import { ErrorBanner } from '../clips/ErrorBanner';
import { ConnectionsPanel } from '../connections/ConnectionsPanel';
import { startEndpointsPolling } from '../connections/endpointsActions';
import { startOverlayEngine } from '../overlay/runActions';
import { RunsPanel } from '../plots/RunsPanel';
import { startPlaybackLoop } from '../playback/playback';
import { PolicyPanel } from '../policies/PolicyPanel';
import { JointTable } from '../plots/JointTable';
import { SimPanel } from '../sim/SimPanel';
import { TrialRunnerPanel } from '../trial/TrialRunnerPanel';
import { bootstrapConsole } from './bootstrap';
import { CentreColumn } from './CentreColumn';
import { startSelectionResets } from './selectionResets';
import { TopBar } from './TopBar';
import { useKeyboardShortcuts } from './useKeyboardShortcuts';

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
  useEffect(() => startSelectionResets(), []);
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
          <CentreColumn />
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
