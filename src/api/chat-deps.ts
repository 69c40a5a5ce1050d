/**
 * @module
 * What a chat request's endpoint needs, and what it knows of the request beyond its body: the
 * deps every endpoint built on the chat pipeline shares (chat completions, embeddings, Responses,
 * vector stores), apart so that each can import them without importing the others.
 */
import type { ChatBackend } from '../protocol/host/backend';
import type { ModelDirectory } from '../models/models';
import type { ImageDeps } from './images';

/** What the endpoint needs. */
export interface ChatDeps {
  /** The device's engines; a server's model comes with its own backend (`ResolvedModel`). */
  backend: ChatBackend;
  models: ModelDirectory;
  /** Longest wait for the first token before a 503 (4 minutes; docs/api.md, Errors). */
  firstTokenTimeoutMs: number;
  /** Longest silence of the engine once tokens flow (60 s; docs/api.md, Errors). */
  stallTimeoutMs: number;
  /** Largest body in bytes. */
  bodyLimit: number;
  /** Largest body of a request with images (default `IMAGE_BODY_LIMIT`, 64 MiB). */
  imageBodyLimit?: number | undefined;
  /** How image URLs are read and images decoded (`ImageDeps`; the service worker passes both). */
  images?: Omit<ImageDeps, 'origin'> | undefined;
}

/** What the endpoint knows of the request beyond its body. */
export interface ChatContext {
  requestId: string;
  /** Whether the page that sent the request is still there. */
  alive?: (() => Promise<boolean>) | undefined;
}
