import { useLayoutEffect, useRef, useState, type KeyboardEvent, type PointerEvent } from 'react';
import { AnalysisPanel } from '../analysis/AnalysisPanel';
import { GapReviewPanel } from '../gap/GapReviewPanel';
import { QualificationBoard } from '../qualification/QualificationBoard';
import { clampDockBodyPx, dockMaxBodyPx, splitterKey } from '../ui/dockLayout';
import { clickDockTab, resizeDock, toggleDock, useDockStore, type DockTab } from '../ui/dockStore';

// The bottom dock of the centre column (Foxglove-style): a splitter on its top edge, a tab strip
// (Qualification board, Gap review, Analysis) and the board of the selected tab, which scrolls inside the
// dock. The splitter is dragged with the pointer or moved with the keys of dockLayout.splitterKey;
// either way the body is clamped so the viewport above keeps its minimum. A click on the tab
// shown folds the dock to its splitter and tab strip (Enter on the splitter too); a click on
// another tab, Enter again or moving the splitter unfolds it.

const TABS: { id: DockTab; label: string; testId: string }[] = [
  { id: 'qualification', label: 'Qualification board', testId: 'dock-tab-qualification' },
  { id: 'gap', label: 'Gap review (Table 11)', testId: 'dock-tab-gap' },
  { id: 'analysis', label: 'Analysis', testId: 'dock-tab-analysis' },
];

const BODY_ID = 'dock-body';

export function BottomDock({ columnPx, timelinePx }: { columnPx: number; timelinePx: number }) {
  const tab = useDockStore((s) => s.tab);
  const open = useDockStore((s) => s.open);
  const requestedBodyPx = useDockStore((s) => s.requestedBodyPx);
  const rootRef = useRef<HTMLDivElement>(null);
  const bodyRef = useRef<HTMLDivElement>(null);
  const [dockChromePx, setDockChromePx] = useState(0);
  // Splitter and tab strip: the dock's height without its body (constant but for fonts and zoom).
  useLayoutEffect(() => {
    const root = rootRef.current!;
    const measure = () => setDockChromePx(root.offsetHeight - (bodyRef.current?.offsetHeight ?? 0));
    measure();
    const observer = new ResizeObserver(measure);
    observer.observe(root);
    return () => observer.disconnect();
  }, []);
  const maxBodyPx = dockMaxBodyPx({ columnPx, timelinePx, dockChromePx });
  const bodyPx = open ? clampDockBodyPx(requestedBodyPx, maxBodyPx) : 0;

  const drag = useRef<{ startY: number; startPx: number } | null>(null);
  const onPointerDown = (e: PointerEvent<HTMLDivElement>) => {
    if (e.button !== 0) return;
    e.preventDefault(); // no text selection while dragging
    e.currentTarget.setPointerCapture(e.pointerId);
    e.currentTarget.focus();
    drag.current = { startY: e.clientY, startPx: bodyPx };
  };
  const onPointerMove = (e: PointerEvent<HTMLDivElement>) => {
    if (!drag.current) return;
    resizeDock(clampDockBodyPx(drag.current.startPx + drag.current.startY - e.clientY, maxBodyPx));
  };
  const endDrag = () => {
    drag.current = null;
  };
  const onKeyDown = (e: KeyboardEvent<HTMLDivElement>) => {
    const action = splitterKey(e.key, e.shiftKey, bodyPx, maxBodyPx);
    if (action.kind === 'none') return;
    e.preventDefault();
    if (action.kind === 'toggle') toggleDock();
    else resizeDock(action.bodyPx);
  };

  return (
    <div className={`dock${open ? '' : ' dock-folded'}`} ref={rootRef} data-testid="dock">
      <div
        className="dock-splitter"
        role="separator"
        aria-orientation="horizontal"
        aria-controls={BODY_ID}
        aria-label="Height of the bottom dock"
        aria-valuemin={0}
        aria-valuemax={maxBodyPx}
        aria-valuenow={bodyPx}
        tabIndex={0}
        title="Drag, or ↑/↓ (Shift: ×4), Page Up/Down for the tallest/shortest, Enter folds the dock"
        onPointerDown={onPointerDown}
        onPointerMove={onPointerMove}
        onPointerUp={endDrag}
        onPointerCancel={endDrag}
        onLostPointerCapture={endDrag}
        onKeyDown={onKeyDown}
        data-testid="dock-splitter"
      />
      <div className="dock-tabs" role="tablist" aria-label="Boards">
        {TABS.map((t) => (
          <button
            key={t.id}
            type="button"
            role="tab"
            className="dock-tab"
            aria-selected={open && tab === t.id}
            aria-controls={BODY_ID}
            title={tab === t.id && open ? 'fold the dock' : `show the ${t.label}`}
            onClick={() => clickDockTab(t.id)}
            data-testid={t.testId}
          >
            {t.label}
          </button>
        ))}
        <span className="spacer" />
        <button
          type="button"
          className="link small dock-fold"
          aria-expanded={open}
          aria-controls={BODY_ID}
          onClick={toggleDock}
          data-testid="dock-fold"
        >
          {open ? '▾ fold' : '▴ show'}
        </button>
      </div>
      {open && (
        <div id={BODY_ID} className="dock-body" role="tabpanel" ref={bodyRef} style={{ height: bodyPx }}>
          {tab === 'qualification' ? <QualificationBoard /> : tab === 'gap' ? <GapReviewPanel /> : <AnalysisPanel />}
        </div>
      )}
    </div>
  );
}
