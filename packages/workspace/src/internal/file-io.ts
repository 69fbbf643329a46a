import { randomBytes, createHash } from 'node:crypto';
import {
  closeSync,
  constants,
  fchmodSync,
  fstatSync,
  fsyncSync,
  openSync,
  readSync,
  renameSync,
  rmSync,
  writeSync,
  type Stats,
} from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { fsError, refuse } from './errors.js';

/** Largest file read whole (line reads, edits, test logs); larger files are read by byte offset. */
export const MAX_WHOLE_FILE_BYTES = 16 * 1024 * 1024;
/** Bytes looked at for a NUL when deciding whether a file is binary (what git looks at). */
export const BINARY_SNIFF_BYTES = 8_000;

/** Opens a regular file for reading without following a link in its last component; `fstat` confirms it. */
export function openRegularFile(real: string, field: string): { fd: number; stats: Stats } {
  let fd: number;
  try {
    fd = openSync(real, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (err) {
    throw fsError(err, real, field);
  }
  const stats = fstatSync(fd);
  if (stats.isDirectory()) {
    closeSync(fd);
    throw refuse('invalid_arguments', 'is_directory', `${field}: ${real} is a directory, not a file (list it with list_files)`, {
      field,
      path: real,
    });
  }
  if (!stats.isFile()) {
    closeSync(fd);
    throw refuse('invalid_arguments', 'not_a_regular_file', `${field}: ${real} is not a regular file (a device, socket or pipe)`, {
      field,
      path: real,
    });
  }
  return { fd, stats };
}

/** Reads up to `length` bytes at `position` (short only at the end of the file). */
export function readAt(fd: number, position: number, length: number): Buffer {
  const buf = Buffer.alloc(length);
  let got = 0;
  while (got < length) {
    const n = readSync(fd, buf, got, length - got, position + got);
    if (n === 0) break;
    got += n;
  }
  return buf.subarray(0, got);
}

/** True when the first `BINARY_SNIFF_BYTES` of `bytes` hold a NUL. */
export const hasNul = (bytes: Uint8Array) => bytes.subarray(0, BINARY_SNIFF_BYTES).includes(0);

/** The refusal of a binary file (a NUL, or bytes that are not UTF-8). */
export const binaryRefusal = (field: string, path: string, cause?: unknown) =>
  refuse(
    'invalid_arguments',
    'binary_file',
    `${field}: ${path} is a binary file (a NUL byte or bytes that are not UTF-8); these tools read and edit text only`,
    { field, path },
    cause,
  );

/** Reads a whole regular file of at most `MAX_WHOLE_FILE_BYTES` as UTF-8 text; binary files are refused. */
export function readTextFile(real: string, field: string): { text: string; bytes: Buffer; stats: Stats } {
  const { fd, stats } = openRegularFile(real, field);
  try {
    if (stats.size > MAX_WHOLE_FILE_BYTES) {
      throw refuse(
        'invalid_arguments',
        'file_too_large',
        `${field}: ${real} has ${stats.size} bytes, more than ${MAX_WHOLE_FILE_BYTES} read whole; read it by byte offset`,
        {
          field,
          path: real,
          bytes: stats.size,
        },
      );
    }
    const bytes = readAt(fd, 0, stats.size);
    if (hasNul(bytes)) throw binaryRefusal(field, real);
    let text: string;
    try {
      text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
    } catch (err) {
      throw binaryRefusal(field, real, err);
    }
    return { text, bytes, stats };
  } finally {
    closeSync(fd);
  }
}

export const sha256Of = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');

/** sha256 and size of the file at `real` now (null when there is none), read in chunks. */
export function fileDigest(real: string, field: string): { sha256: string; bytes: number } | null {
  let fd: number;
  try {
    fd = openSync(real, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw fsError(err, real, field);
  }
  try {
    const hash = createHash('sha256');
    const chunk = Buffer.alloc(1 << 16);
    let pos = 0;
    for (;;) {
      const n = readSync(fd, chunk, 0, chunk.length, pos);
      if (n === 0) break;
      hash.update(chunk.subarray(0, n));
      pos += n;
    }
    return { sha256: hash.digest('hex'), bytes: pos };
  } finally {
    closeSync(fd);
  }
}

/**
 * Replaces `target` with `data` atomically: a temporary file in the same directory is written, synced, given the
 * mode (`mode`, or the default for new files) and renamed over the target, so a reader sees the old or the new
 * content, never a part. On failure the temporary file is removed and the target is unchanged.
 */
export function atomicWrite(target: string, data: Uint8Array, mode: number | null, field: string): void {
  const tmp = join(dirname(target), `.${basename(target)}.libos-${randomBytes(6).toString('hex')}.tmp`);
  let fd: number;
  try {
    fd = openSync(tmp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o666);
  } catch (err) {
    throw fsError(err, target, field);
  }
  try {
    try {
      let off = 0;
      while (off < data.length) off += writeSync(fd, data, off, data.length - off);
      if (mode !== null) fchmodSync(fd, mode & 0o7777);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(tmp, target);
  } catch (err) {
    rmSync(tmp, { force: true });
    throw fsError(err, target, field);
  }
}
