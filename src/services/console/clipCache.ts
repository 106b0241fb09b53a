import type { MotionClip } from '../../domain/motion/motionClip';

// The clips this console's services decoded (clips.load, clips.decode, clips.openDialog), by clip
// id (a content hash), so sim.run can name the clip on display instead of sending it back. Least
// recently used first out; a clip that fell out is loaded again by the renderer.

export const CLIP_CACHE_SIZE = 8;

export class ClipCache {
  private readonly clips = new Map<string, MotionClip>();

  constructor(private readonly capacity = CLIP_CACHE_SIZE) {}

  put(clip: MotionClip): void {
    this.clips.delete(clip.id);
    this.clips.set(clip.id, clip);
    while (this.clips.size > this.capacity) this.clips.delete(this.clips.keys().next().value as string);
  }

  get(id: string): MotionClip | undefined {
    const clip = this.clips.get(id);
    if (clip) {
      this.clips.delete(id);
      this.clips.set(id, clip);
    }
    return clip;
  }

  get size(): number {
    return this.clips.size;
  }
}
