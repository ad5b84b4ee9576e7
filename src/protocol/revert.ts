import { z } from 'zod';
import { ChatMessageSchema } from './chat-message.js';

/** The body of POST .../runs/:runId/revert and POST .../unrevert. */
export const RevertRequestSchema = z
  .object({
    /** Write even the paths changed since the last capture (a person, another session): otherwise 409 REVERT_CONFLICT. */
    force: z.boolean().optional(),
  })
  .strict()
  .meta({ id: 'RevertRequest' });

/** What a revert or an unrevert did to one path of the workspace. */
export const RevertedFileSchema = z
  .object({
    path: z.string(),
    /** `restored`: written from the tree (its content and mode); `deleted`: the tree has no such path, it was removed. */
    action: z.enum(['restored', 'deleted']),
  })
  .strict()
  .meta({ id: 'RevertedFile' });

/** The answer of a revert or an unrevert. */
export const RevertResponseSchema = z
  .object({
    /** The run the revert was asked for (the first reverted run). */
    run_id: z.string(),
    /** Every reverted run, oldest first (the run and each later one). */
    reverted_run_ids: z.array(z.string()),
    /** The paths written or removed (only those that differed from the tree restored). */
    files: z.array(RevertedFileSchema),
    /** The messages hidden from the model (revert) or visible again (unrevert). */
    messages: z.number().int().nonnegative(),
    /** The tree the workspace's reverted paths now match (`git-tree:<hex>`); absent when no run had a change set. */
    tree: z.string().optional(),
  })
  .strict()
  .meta({ id: 'RevertResponse' });

/**
 * SessionInfo.reverted: the runs reverted and not unreverted yet (POST .../unrevert puts them back); absent when
 * nothing is reverted, or once a run after the revert dropped the reverted messages for good.
 */
export const RevertedRunsSchema = z
  .object({
    /** The run the revert was asked for (the first reverted run). */
    runId: z.string(),
    /** Every reverted run, oldest first. */
    runIds: z.array(z.string()),
    /** The messages hidden from the model (what an unrevert puts back). */
    hiddenMessages: z.number().int().nonnegative(),
  })
  .strict()
  .meta({ id: 'RevertedRuns' });

/** A session's reverted runs, kept in its snapshot until an unrevert or the next run (which drops them for good). */
export const RevertStateSchema = z
  .object({
    runId: z.string(),
    runIds: z.array(z.string()),
    /** The transcript's length when the messages were hidden (where they go back on unrevert) and its epoch. */
    atMessage: z.number().int().nonnegative(),
    epoch: z.number().int().nonnegative(),
    /** The hidden messages, in order. */
    messages: z.array(ChatMessageSchema),
    /** The first reverted run's base tree (the workspace's reverted paths now) and the last one's result tree. */
    baseTree: z.string().optional(),
    resultTree: z.string().optional(),
    /** The paths the reverted runs changed (the ones an unrevert restores). */
    paths: z.array(z.string()),
  })
  .strict();

export type RevertRequest = z.infer<typeof RevertRequestSchema>;
export type RevertResponse = z.infer<typeof RevertResponseSchema>;
export type RevertedRuns = z.infer<typeof RevertedRunsSchema>;
export type RevertedFile = z.infer<typeof RevertedFileSchema>;
export type RevertState = z.infer<typeof RevertStateSchema>;
