/**
 * Fault injection, for tests only: the points where a test makes a step of an accumulator fail or pause, to show
 * that a repeat loses and doubles nothing. Production code never injects any, so every accumulator answers
 * NO_FAULTS; a test injects them from inside the object (runInDurableObject gives its state):
 *
 *   await runInDurableObject(stub, (_, state) => injectFaults(state, { flush: { beforeBatch: fail } }));
 *
 * They are kept here, by object, rather than as fields of the object's class: the class stays what production
 * runs. The steps read them once per D1 batch, archive object, release call or adoption page, never per event.
 */

/** Around each D1 batch of a flush (alarm.ts), with the chunk's number in this call. */
export interface FlushHooks {
	beforeBatch?: (chunk: number) => void;
	afterBatch?: (chunk: number) => void;
}

/** Before each archive object is written (archive.ts). */
export interface ArchiveHooks {
	beforePut?: (key: string) => void;
}

/** After each release call of a handover returned, before its keys are stored (handover.ts). */
export interface HandoverHooks {
	afterRelease?: (holder: string) => void;
}

/** Around the steps of an adoption (adoption.ts). */
export interface AdoptionHooks {
	afterSetAside?: () => void;
	beforeAbsorb?: () => void;
}

export interface AccumulatorFaults {
	flush?: FlushHooks;
	archive?: ArchiveHooks;
	handover?: HandoverHooks;
	adoption?: AdoptionHooks;
}

export const NO_FAULTS: Readonly<AccumulatorFaults> = Object.freeze({});

const injected = new WeakMap<DurableObjectState, AccumulatorFaults>();

/** Tests only: replaces the faults of the object whose state this is ({} removes them). */
export function injectFaults(state: DurableObjectState, faults: AccumulatorFaults): void {
	injected.set(state, faults);
}

export function faultsOf(state: DurableObjectState): Readonly<AccumulatorFaults> {
	return injected.get(state) ?? NO_FAULTS;
}
