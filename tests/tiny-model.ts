/**
 * A self-hosted model made up for tests: an MLC chat config, a tokenizer, a weight manifest and
 * its shards (random bytes), and a model library that is not WebAssembly, so that it downloads
 * like a real model and cannot load. Shared by the unit tests (a fake network) and the browser
 * tests (a static server of their own).
 */
import { createHash, randomBytes } from 'node:crypto';

/** One file of the model: its path under the model's folder, and its bytes. */
export interface TinyFile {
  path: string;
  bytes: Uint8Array;
  contentType: string;
}

/** The generated model. */
export interface TinyModel {
  /** Every file, in the order a download fetches them. */
  files: TinyFile[];
  /** The paths of the weight shards. */
  shards: string[];
  /** The library's path. */
  lib: string;
  /** Sum of every file's size. */
  totalBytes: number;
  /** The SRI hash of the library. */
  libIntegrity: string;
}

const json = (value: unknown) => new TextEncoder().encode(JSON.stringify(value));

/**
 * Makes the files of a model whose weights live under `resolve/main/` of the model's folder
 * (as WebLLM expects of a base URL) and whose library is `lib/tiny.wasm` beside it.
 */
export function tinyModel({ shards = 4, shardBytes = 256 * 1024 } = {}): TinyModel {
  const shardFiles: TinyFile[] = Array.from({ length: shards }, (_, i) => ({
    path: `resolve/main/params_shard_${i}.bin`,
    bytes: new Uint8Array(randomBytes(shardBytes)),
    contentType: 'application/octet-stream',
  }));
  const weights = {
    metadata: { ParamSize: shards, ParamBytes: shards * shardBytes, BitsPerParam: 32 },
    records: shardFiles.map((file, i) => ({
      dataPath: file.path.slice('resolve/main/'.length),
      format: 'raw-shard',
      nbytes: shardBytes,
      records: [
        {
          name: `param_${i}`,
          shape: [shardBytes / 4],
          dtype: 'float32',
          format: 'f32-to-bf16',
          nbytes: shardBytes,
          byteOffset: 0,
        },
      ],
      md5sum: createHash('md5').update(file.bytes).digest('hex'),
    })),
  };
  const config = {
    model_type: 'llama',
    quantization: 'q4f32_1',
    vocab_size: 8,
    context_window_size: 256,
    sliding_window_size: -1,
    attention_sink_size: -1,
    prefill_chunk_size: 64,
    temperature: 0.7,
    top_p: 0.9,
    repetition_penalty: 1,
    presence_penalty: 0,
    frequency_penalty: 0,
    tokenizer_files: ['tokenizer.json'],
    conv_template: {
      name: 'tiny',
      system_template: '{system_message}',
      system_message: '',
      roles: { user: 'user', assistant: 'assistant' },
      seps: ['\n'],
      role_content_sep: ': ',
      role_empty_sep: ':',
      stop_str: [],
      stop_token_ids: [2],
      system_prefix_token_ids: [1],
    },
  };
  const tokenizer = {
    version: '1.0',
    model: {
      type: 'WordLevel',
      vocab: { '<unk>': 0, '<s>': 1, '</s>': 2, hi: 3 },
      unk_token: '<unk>',
    },
  };
  const lib = new TextEncoder().encode(
    'this is not WebAssembly, so the model cannot load\n'.repeat(64),
  );
  const files: TinyFile[] = [
    {
      path: 'resolve/main/mlc-chat-config.json',
      bytes: json(config),
      contentType: 'application/json',
    },
    {
      path: 'resolve/main/tensor-cache.json',
      bytes: json(weights),
      contentType: 'application/json',
    },
    {
      path: 'resolve/main/tokenizer.json',
      bytes: json(tokenizer),
      contentType: 'application/json',
    },
    ...shardFiles,
    { path: 'lib/tiny.wasm', bytes: lib, contentType: 'application/wasm' },
  ];
  return {
    files,
    shards: shardFiles.map((f) => f.path),
    lib: 'lib/tiny.wasm',
    totalBytes: files.reduce((n, f) => n + f.bytes.byteLength, 0),
    libIntegrity: `sha256-${createHash('sha256').update(lib).digest('base64')}`,
  };
}
