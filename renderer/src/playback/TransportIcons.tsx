// Transport-control icons as inline SVG: the Unicode media glyphs are missing from many system
// fonts (they render as empty boxes), and the CSP allows no icon fonts.

const common = { width: 14, height: 14, viewBox: '0 0 14 14', 'aria-hidden': true, fill: 'currentColor' } as const;

export const FirstIcon = () => (
  <svg {...common}>
    <rect x="2" y="2" width="2" height="10" />
    <path d="M12 2v10L5 7z" />
  </svg>
);
export const LastIcon = () => (
  <svg {...common}>
    <rect x="10" y="2" width="2" height="10" />
    <path d="M2 2v10l7-5z" />
  </svg>
);
export const StepBackIcon = () => (
  <svg {...common}>
    <rect x="3" y="3" width="1.6" height="8" />
    <path d="M11 3v8L5.5 7z" />
  </svg>
);
export const StepForwardIcon = () => (
  <svg {...common}>
    <rect x="9.4" y="3" width="1.6" height="8" />
    <path d="M3 3v8l5.5-4z" />
  </svg>
);
export const PlayIcon = () => (
  <svg {...common}>
    <path d="M3 2v10l9-5z" />
  </svg>
);
export const PauseIcon = () => (
  <svg {...common}>
    <rect x="3" y="2" width="3" height="10" />
    <rect x="8" y="2" width="3" height="10" />
  </svg>
);
