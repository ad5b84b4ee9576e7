import { CodeError } from '../../errors.js';
import type { BudgetHostEndpoint } from '../../protocol/budget.js';
import type { PendingQuestionView, QuestionAnswer, StoredQuestion } from '../../protocol/questions.js';
import type { AnsweredConfirmation, ConfirmationAnswer, PendingConfirmation } from '../policy/confirmation-broker.js';
import type { HookEngine } from '../policy/hooks/hook-engine.js';
import type { AnsweredQuestion, QuestionBroker } from '../policy/question-broker.js';
import type { SessionGovernance } from '../policy/session-governance.js';
import type { SharedGovernance } from '../policy/shared-governance.js';
import type { HostEnv } from '../ports/host-env.js';
import type { ControlLane } from '../queue/lane-command.js';
import type { ResolvedSessionConfig } from './resolved-session-config.js';
import type { SessionLifecycle } from './session-lifecycle.js';
import { budgetHostGuard, buildSessionGovernance, type SessionGovernanceParts } from './session-governance-factory.js';

/** What a restored session's snapshot holds for its governance. */
export interface RestoredGovernance {
  readonly grants: readonly string[];
  readonly questions: readonly StoredQuestion[];
}

/** A new session's (or one restored with neither): shared by all of them, so it costs no session any heap. */
const NOTHING_RESTORED: RestoredGovernance = Object.freeze({ grants: [], questions: [] });

/** What a snapshot's grants and questions give the governance: NOTHING_RESTORED when it kept neither. */
export function restoredGovernance(
  grants: readonly string[] | undefined,
  questions: readonly StoredQuestion[] | undefined,
): RestoredGovernance {
  if ((grants?.length ?? 0) === 0 && (questions?.length ?? 0) === 0) return NOTHING_RESTORED;
  return { grants: grants ?? [], questions: questions ?? [] };
}

/**
 * A session's governance parts, built on first use (a child's are its parent's), and what the session
 * does with them: its budget host, its session_start notice, and which parts it owns (settles on close).
 */
export class SessionGovernanceAccess {
  private built: SessionGovernanceParts | undefined;

  constructor(
    private readonly config: ResolvedSessionConfig,
    private readonly hostEnv: HostEnv,
    private readonly shared: SharedGovernance,
    /** A child session's parent's parts: the child shares them and never settles or closes them. */
    private readonly inherited: SessionGovernanceParts | undefined,
    /** What a restored session's snapshot held: "allow always" grants and kept questions, taken again once the parts are built. */
    private readonly restored: RestoredGovernance,
    private readonly lifecycle: SessionLifecycle,
    /** The session's lane queue: answering a confirmation is a control operation (the control lane). */
    private readonly queue: ControlLane | undefined,
    /** Told when the questions the snapshot keeps change (an autoSave session saves). */
    private readonly onQuestionsChanged?: () => void,
  ) {}

  /** The session's governance (policy, confirmation broker, hooks, budget, redaction); built on first use. */
  get session(): SessionGovernance {
    return this.parts().governance;
  }

  /** The session's hook engine (REST and WebSocket hook registration); built on first use. */
  get hooks(): HookEngine {
    return this.parts().hooks;
  }

  /** Pending human confirmations (none while the governance was never built). */
  pendingConfirmations(): PendingConfirmation[] {
    return this.built?.governance.broker.list() ?? [];
  }

  /** Answer a pending confirmation (404 unknown, 409 already settled or digest mismatch); `always` may add a grant (ConfirmationBroker). */
  answerConfirmation(toolId: string, answer: ConfirmationAnswer): AnsweredConfirmation {
    this.lifecycle.assertOpen();
    const queue = this.queue;
    if (queue === undefined) return this.parts().governance.broker.answer(toolId, answer);
    return queue.control(() => this.parts().governance.broker.answer(toolId, answer));
  }

  /** Questions the agent asked the user and waits on, kept ones of a restored session included. */
  pendingQuestions(): PendingQuestionView[] {
    return this.questions()?.list() ?? [];
  }

  /**
   * Answer a pending question (404 unknown, 409 settled, 400 an option not offered or free text not allowed);
   * a question kept across a restart or takeover names the run its answer resumes.
   */
  answerQuestion(questionId: string, answer: QuestionAnswer): AnsweredQuestion {
    this.lifecycle.assertOpen();
    const questions = this.questions();
    if (!questions) throw new CodeError('QUESTION_NOT_FOUND', `no pending question ${questionId}`, { questionId });
    const queue = this.queue;
    if (queue === undefined) return questions.answer(questionId, answer);
    return queue.control(() => questions.answer(questionId, answer));
  }

  /** Take back the answer of a kept question whose run could not be resumed (it is listed and answerable again). */
  withdrawAnswer(questionId: string): void {
    this.questions()?.withdraw(questionId);
  }

  /** Reject every pending confirmation (the seed's cancelConfirmations): the number cancelled, 0 when none. */
  cancelConfirmations(): number {
    this.lifecycle.assertOpen();
    return this.built?.governance.broker.rejectAll('cancelled by the host') ?? 0;
  }

  /** The session's governance parts, built on first use. */
  parts(): SessionGovernanceParts {
    if (!this.built) {
      this.built =
        this.inherited ?? buildSessionGovernance(this.config, this.hostEnv, this.shared, this.onQuestionsChanged);
      if (!this.inherited) {
        this.built.governance.broker.restoreGrants(this.restored.grants);
        this.built.governance.questions?.restore(this.restored.questions);
      }
    }
    return this.built;
  }

  /** The "allow always" grants the session's snapshot keeps: the broker's, or the restored ones while it is not built (a child's are its parent's). */
  grantKeys(): readonly string[] {
    if (this.inherited) return [];
    return this.built ? this.built.governance.broker.grantKeys() : this.restored.grants;
  }

  /** The questions the session's snapshot keeps (pending_questions): the broker's, or the restored ones while it is not built. */
  storedQuestions(): readonly StoredQuestion[] {
    if (this.inherited) return [];
    return this.built?.governance.questions?.stored() ?? this.restored.questions;
  }

  /** The question broker: built for a restored session that kept questions, else only once the parts were. */
  private questions(): QuestionBroker | undefined {
    if (!this.built && !this.inherited && this.restored.questions.length > 0) return this.parts().governance.questions;
    return this.built?.governance.questions;
  }

  /** The parts if they were built, else undefined (an idle session never builds them). */
  get current(): SessionGovernanceParts | undefined {
    return this.built;
  }

  /** The parts the session itself owns and settles on close: undefined for a child (its parent's) or when never built. */
  get owned(): SessionGovernanceParts | undefined {
    return this.inherited ? undefined : this.built;
  }

  /**
   * Set (or with undefined remove) the external budget host the session's guard consults. A WebSocket host
   * must be a connection of the session's tenant; a webhook may call private addresses only with `allowPrivateNetworks`.
   */
  setBudgetHost(endpoint: BudgetHostEndpoint | undefined, allowPrivateNetworks = false): void {
    this.lifecycle.assertOpen();
    if (endpoint?.type === 'websocket') {
      const binding = this.shared.hostRegistry.bindingOf(endpoint.connectionId);
      if (!binding || binding.tenantId !== this.config.ownerTenantId) {
        throw new CodeError(
          'VALIDATION_ERROR',
          'body.connectionId: no host connection of this tenant has this id; send {"type":"host_register"} on an events WebSocket first',
          { field: 'connectionId' },
        );
      }
    }
    this.parts().budget.setHost(
      endpoint ? budgetHostGuard(endpoint, this.config, this.hostEnv, this.shared, allowPrivateNetworks) : undefined,
    );
  }

  /** Tell session_start hooks; only sessions with hooks build their engine for it (idle sessions stay small). */
  notifyStart(): void {
    const { config } = this;
    if (this.shared.configHooks.length === 0 && !config.options.hooks?.length) return;
    this.parts().hooks.observe(
      'session_start',
      { session_id: config.sessionId, workspace: config.workspace, model: config.model.id, labels: config.labels },
      { sessionId: config.sessionId },
    );
  }
}
