import { execFile } from 'node:child_process';
import { copyFile, mkdir, mkdtemp, readdir, rename, rm } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { UsageError } from '../util/errors.js';

const run = promisify(execFile);

/** Size of the filesystem the receiver's data lives on (sparse: only what is written takes space). */
const IMAGE_BYTES = 256 * 1024 * 1024;

/**
 * A power cut for a receiver whose store is a local file. Its data directory is a fresh ext4
 * filesystem on a loop device. At the cut the receiver is frozen (SIGSTOP: it issues no more
 * writes), and the image file is copied: the copy holds what the filesystem had handed to its
 * block device, and not what sat only in its page cache — what a disk holds when the power goes.
 * The receiver is then killed, the filesystem unmounted, and the copy mounted in its place, so
 * the restarted receiver (and what reads its store) see what survived the cut, as after a reboot.
 *
 * A journal commit every 60 s (instead of ext4's 5 s) keeps the filesystem from flushing a
 * receiver's unsynced writes on its own schedule in between: what reaches the disk is what the
 * receiver synced. `synchronous = FULL` passes; `NORMAL` and `OFF` lose what they acknowledged.
 */
export class PowerCutDisk {
  private constructor(
    readonly dir: string,
    private readonly work: string,
    private image: string,
  ) {}

  /** Mount a fresh filesystem at `dir` (created if missing; it must be empty). */
  static async create(dir: string): Promise<PowerCutDisk> {
    await requirePowerCut();
    await mkdir(dir, { recursive: true });
    if ((await readdir(dir)).length > 0)
      throw new UsageError(`--power-cut ${dir}: the directory must be empty (chaos mounts a fresh filesystem there)`);
    const work = await mkdtemp(join(tmpdir(), 'hookdrill-power-cut-'));
    const disk = new PowerCutDisk(dir, work, join(work, 'disk.img'));
    await run('truncate', ['-s', String(IMAGE_BYTES), disk.image]);
    await run('mkfs.ext4', ['-q', '-F', '-E', 'lazy_itable_init=0,lazy_journal_init=0', disk.image]);
    await disk.mount();
    // The receiver may run as anyone: the directory is its to write.
    await run('chmod', ['1777', dir]);
    return disk;
  }

  private async mount(): Promise<void> {
    try {
      await run('mount', ['-o', 'loop,commit=60', this.image, this.dir]);
    } catch (err) {
      throw new UsageError(`--power-cut: cannot mount a loop filesystem at ${this.dir}: ${oneLine(err)}`);
    }
  }

  /** The cut, while the receiver is frozen: what the disk holds now. */
  async snapshot(): Promise<void> {
    await copyFile(this.image, join(this.work, 'cut.img'));
  }

  /** After the receiver is gone: the disk as the cut left it, mounted where the data was. */
  async restore(): Promise<void> {
    await this.unmount();
    await rename(join(this.work, 'cut.img'), this.image);
    await this.mount();
  }

  private async unmount(): Promise<void> {
    for (let i = 0; ; i++) {
      try {
        await run('umount', [this.dir]);
        return;
      } catch (err) {
        // A process of the receiver's that has not quite exited still holds a file there.
        if (i >= 50) throw new UsageError(`--power-cut: cannot unmount ${this.dir}: ${oneLine(err)}`);
        await new Promise((r) => setTimeout(r, 100));
      }
    }
  }

  async close(): Promise<void> {
    await this.unmount().catch(() => undefined);
    await rm(this.work, { recursive: true, force: true });
  }
}

/** Why a power cut cannot run here, as a usage error: root, loop devices and mkfs.ext4 are needed. */
async function requirePowerCut(): Promise<void> {
  if (process.platform !== 'linux') throw new UsageError('--power-cut needs Linux (a loop-mounted ext4 filesystem)');
  if (process.getuid?.() !== 0) throw new UsageError("--power-cut needs root: it mounts a loop filesystem for the receiver's data");
  if (!existsSync('/dev/loop-control')) throw new UsageError('--power-cut needs loop devices (/dev/loop-control is missing)');
  try {
    await run('mkfs.ext4', ['-V']);
  } catch {
    throw new UsageError('--power-cut needs mkfs.ext4 (e2fsprogs)');
  }
}

function oneLine(err: unknown): string {
  const e = err as { stderr?: string; message?: string };
  return String(e.stderr || e.message || err)
    .trim()
    .split('\n')[0] as string;
}
