import type { z } from 'zod';
import type { AgentDirRegisteredResponseSchema, AgentInfo } from '../protocol/agents.js';
import type { McpServerConfigInput, McpServerStatus } from '../protocol/mcp.js';
import type { MemoryItem, MemoryStats } from '../protocol/memory.js';
import { toA3sError } from './a3s-error.js';
import type { InlineSkill, SkillInfo } from '../protocol/skills.js';
import { seg } from './http-transport.js';
import { falseOn, sessionPath, type SessionContext } from './session-context.js';

/** Answer of registerAgentDir: how many definitions were registered, and the session's agents now. */
export type AgentDirRegistered = z.infer<typeof AgentDirRegisteredResponseSchema>;

/** The session's memory, skills, agents and MCP servers (the seed's method names). */
export class SessionMemory {
  constructor(private readonly ctx: SessionContext) {}

  private path(suffix: string): string {
    return sessionPath(this.ctx, suffix);
  }

  /** Remember a successful task (MemoryNotConfiguredError without a memory store). */
  async rememberSuccess(task: string, tools: string[], result: string): Promise<MemoryItem> {
    return (await this.ctx.transport.post<{ item: MemoryItem }>(this.path('/memory/success'), { task, tools, result }))
      .item;
  }

  /** Remember a failed task. */
  async rememberFailure(task: string, error: string, tools: string[] = []): Promise<MemoryItem> {
    return (await this.ctx.transport.post<{ item: MemoryItem }>(this.path('/memory/failure'), { task, error, tools }))
      .item;
  }

  /** The newest memories, newest first. */
  async memoryRecent(limit?: number): Promise<MemoryItem[]> {
    return (await this.ctx.transport.get<{ items: MemoryItem[] }>(this.path('/memory/recent'), { limit })).items;
  }

  /** Memories whose content contains the query, most relevant first. */
  async recallSimilar(query: string, limit?: number): Promise<MemoryItem[]> {
    return (await this.ctx.transport.get<{ items: MemoryItem[] }>(this.path('/memory/similar'), { query, limit }))
      .items;
  }

  /** Memories carrying any of the tags, most relevant first. */
  async recallByTags(tags: string[], limit?: number): Promise<MemoryItem[]> {
    return (
      await this.ctx.transport.get<{ items: MemoryItem[] }>(this.path('/memory/tags'), { tags: tags.join(','), limit })
    ).items;
  }

  /** Counts of the memory tiers. */
  memoryStats(): Promise<MemoryStats> {
    return this.ctx.transport.get<MemoryStats>(this.path('/memory/stats'));
  }

  /** The working tier (the seed's getWorking): at most 10 items, kept by relevance. */
  async getWorking(): Promise<MemoryItem[]> {
    return (await this.ctx.transport.get<{ items: MemoryItem[] }>(this.path('/memory/working'))).items;
  }

  /** Empty the working tier (the seed's clearWorking; the server emits memory_cleared). */
  async clearWorking(): Promise<void> {
    await this.ctx.transport.delete(this.path('/memory/working'));
  }

  /** The short-term ring, oldest first (the seed's getShortTerm): this session's last 100 items. */
  async getShortTerm(): Promise<MemoryItem[]> {
    return (await this.ctx.transport.get<{ items: MemoryItem[] }>(this.path('/memory/short-term'))).items;
  }

  /** Empty the short-term ring (the seed's clearShortTerm; long-term and working stay). */
  async clearShortTerm(): Promise<void> {
    await this.ctx.transport.delete(this.path('/memory/short-term'));
  }

  /** Add (or replace) an inline skill; answers the skill added. */
  async addSkill(skill: InlineSkill): Promise<SkillInfo> {
    return (await this.ctx.transport.post<{ skill: SkillInfo }>(this.path('/skills'), skill)).skill;
  }

  /** Remove a skill: true when it was there, false for an unknown name. */
  async removeSkill(name: string): Promise<boolean> {
    return (
      (await falseOn(['SKILL_NOT_FOUND'], () => this.ctx.transport.delete(this.path(`/skills/${seg(name)}`)))) !== false
    );
  }

  /** The session's skills. */
  async skills(): Promise<SkillInfo[]> {
    return (await this.ctx.transport.get<{ skills: SkillInfo[] }>(this.path('/skills'))).skills;
  }

  /** The names of the session's skills. */
  async skillNames(): Promise<string[]> {
    return (await this.skills()).map((skill) => skill.name);
  }

  /** Register a directory of agent definitions inside the workspace. */
  registerAgentDir(path: string): Promise<AgentDirRegistered> {
    return this.ctx.transport.post<AgentDirRegistered>(this.path('/agents/dirs'), { path });
  }

  /** The session's agents: built-ins, the operator's, then the session's own. */
  async agents(): Promise<AgentInfo[]> {
    return (await this.ctx.transport.get<{ agents: AgentInfo[] }>(this.path('/agents'))).agents;
  }

  /** Add an MCP server to the session's own layer; answers its tool count (the seed's addMcp). */
  async addMcp(config: McpServerConfigInput): Promise<number> {
    return (await this.ctx.transport.post<{ toolCount: number }>(this.path('/mcp'), config)).toolCount;
  }

  /**
   * The seed's positional addMcpServer(name, transport = 'stdio', command, args, url, headers, env, timeoutMs): the
   * tool count. A missing command (stdio) or url (http) is a ValidationError naming it, as the seed refuses it.
   */
  async addMcpServer(
    name: string,
    transport: 'stdio' | 'http' | 'streamable-http' = 'stdio',
    command?: string | null,
    args?: string[] | null,
    url?: string | null,
    headers?: Record<string, string> | null,
    env?: Record<string, string> | null,
    timeoutMs?: number | null,
  ): Promise<number> {
    const extra = {
      ...(env ? { env } : {}),
      ...(timeoutMs !== undefined && timeoutMs !== null ? { timeoutMs } : {}),
    };
    if (transport === 'stdio') {
      if (!command) throw missing('command', "'command' is required for stdio transport");
      return this.addMcp({ name, transport: { type: 'stdio', command, args: args ?? [] }, ...extra });
    }
    if (!url) throw missing('url', `'url' is required for ${transport} transport`);
    return this.addMcp({ name, transport: { type: transport, url, ...(headers ? { headers } : {}) }, ...extra });
  }

  /** Remove one of the session's own MCP servers (the seed's removeMcpServer: void); NotFoundError when it is not one of them. */
  async removeMcpServer(name: string): Promise<void> {
    await this.ctx.transport.delete(this.path(`/mcp/${seg(name)}`));
  }

  /** MCP servers of every layer the session sees, with their status. */
  async mcps(): Promise<McpServerStatus[]> {
    return (await this.ctx.transport.get<{ servers: McpServerStatus[] }>(this.path('/mcp'))).servers;
  }

  /** Remove one of the session's own MCP servers: false when it is not one of them. */
  async removeMcp(name: string): Promise<boolean> {
    return (await falseOn(['NOT_FOUND'], () => this.ctx.transport.delete(this.path(`/mcp/${seg(name)}`)))) !== false;
  }
}

/** The seed's refusal of an addMcpServer call without its transport's command or url, typed. */
function missing(field: string, message: string) {
  return toA3sError('VALIDATION_ERROR', message, 0, { field });
}
