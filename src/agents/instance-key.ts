/**
 * The shape of an agent key (an instance's key): what events, usage and subscriptions accept. A module of its own,
 * so that the events' fast path checks it without loading the instances' storage (docs/scaling.md#cold-start).
 */
export const INSTANCE_KEY = /^[A-Za-z0-9._:-]{1,200}$/;
