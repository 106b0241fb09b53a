import { useLayoutEffect, useRef, useState } from 'react';
import { Timeline } from '../playback/Timeline';
import { Viewport } from '../viewport/Viewport';
import { BottomDock } from './BottomDock';

// The centre column: the 3D viewport, the timeline right under it (so the playhead is always in
// sight with the robot), then the bottom dock with the boards. The column measures its own height
// and the timeline's (ResizeObserver: window resizes, an error banner above, the timeline
// wrapping) so the dock can keep the viewport at its minimum (dockLayout.ts).

export function CentreColumn() {
  const columnRef = useRef<HTMLElement>(null);
  const timelineRef = useRef<HTMLDivElement>(null);
  const [heights, setHeights] = useState({ columnPx: 0, timelinePx: 0 });
  useLayoutEffect(() => {
    const column = columnRef.current!;
    const timeline = timelineRef.current!;
    const measure = () => setHeights({ columnPx: column.clientHeight, timelinePx: timeline.offsetHeight });
    measure();
    const observer = new ResizeObserver(measure);
    observer.observe(column);
    observer.observe(timeline);
    return () => observer.disconnect();
  }, []);
  return (
    <main className="center" ref={columnRef}>
      <Viewport />
      <div className="timeline-slot" ref={timelineRef}>
        <Timeline />
      </div>
      <BottomDock columnPx={heights.columnPx} timelinePx={heights.timelinePx} />
    </main>
  );
}
