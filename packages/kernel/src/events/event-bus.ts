// The named export: under node16 and nodenext the default import of this CommonJS package types as its module, not the class.
import { EventEmitter } from 'eventemitter3';

/** A durable event as stored and published. */
export interface RuntimeEvent {
  readonly seq: number;
  readonly id: string;
  readonly ts: string;
  readonly pid: string | null;
  readonly type: string;
  readonly data: Readonly<Record<string, unknown>>;
}

/** An audit record as stored. Ids, hashes, sizes and labels only; never payloads. */
export interface AuditRecord {
  readonly seq: number;
  readonly id: string;
  readonly ts: string;
  readonly actor: string;
  readonly action: string;
  readonly target: string | null;
  readonly decision: string | null;
  readonly callId: string | null;
  readonly details: Readonly<Record<string, unknown>>;
}

interface BusEvents {
  event: (event: RuntimeEvent) => void;
  audit: (record: AuditRecord) => void;
}

/**
 * In-process publication of committed events and audit records (published only after their transaction commits).
 *
 * @example
 * const bus = new EventBus(); // the kernel's one; hosts listen through `rt.watch`
 * bus.on('event', (e) => console.log(e.type));
 */
export class EventBus extends EventEmitter<BusEvents> {}
