/** What a run request does while another run is active (LangGraph's multitask_strategy); `reject` is the default. */
export const MULTITASK_STRATEGIES = ['reject', 'enqueue', 'interrupt', 'rollback'] as const;

/** One of MULTITASK_STRATEGIES. */
export type MultitaskStrategy = (typeof MULTITASK_STRATEGIES)[number];
