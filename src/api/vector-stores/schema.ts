/**
 * @module
 * src/api/vector-stores/ is OpenAI's Vector Stores on the device: the stores, their files and
 * file batches, the indexing that reads, chunks and embeds each file, and the search. Pure like
 * the rest of src/api: what it needs of the browser comes in through `DocumentDeps`.
 *
 * The request bodies and list queries as valibot schemas, as the openai SDK types them
 * (`resources/vector-stores/*.d.ts`): unknown fields pass, `null` is absent.
 */
import * as v from 'valibot';
import { metadataSchema, noArray } from '../../protocol/schema';
import { ChunkingStrategySchema } from '../../documents/chunk';

const int = v.pipe(v.number(), v.integer());

/** A file's attributes: up to 16, strings up to 512 characters, numbers or booleans. */
export const attributesSchema = v.pipe(
  noArray(
    v.record(
      v.pipe(v.string(), v.maxLength(64)),
      v.union([v.pipe(v.string(), v.maxLength(512)), v.number(), v.boolean()]),
    ),
  ),
  v.check((m) => Object.keys(m).length <= 16, 'at most 16 attributes.'),
);

/** `chunking_strategy` as a request gives it, read as the strategy a file reports. */
export const chunkingSchema = noArray(ChunkingStrategySchema);

const expiresAfter = noArray(
  v.looseObject({
    anchor: v.literal('last_active_at'),
    days: v.pipe(int, v.minValue(1), v.maxValue(365)),
  }),
);

const fileId = v.pipe(v.string(), v.minLength(1));

/** `POST /vector_stores`, with Hearth's `embedding_model`. */
export const createStoreSchema = noArray(
  v.looseObject({
    name: v.nullish(v.string()),
    description: v.nullish(v.string()),
    file_ids: v.nullish(v.pipe(v.array(fileId), v.maxLength(500))),
    chunking_strategy: v.nullish(chunkingSchema),
    expires_after: v.nullish(expiresAfter),
    metadata: v.nullish(metadataSchema),
    embedding_model: v.nullish(v.pipe(v.string(), v.minLength(1))),
  }),
);

/** `POST /vector_stores/{id}`. */
export const updateStoreSchema = noArray(
  v.looseObject({
    name: v.nullish(v.string()),
    expires_after: v.nullish(expiresAfter),
    metadata: v.nullish(metadataSchema),
  }),
);

/** `POST /vector_stores/{id}/files`. */
export const addFileSchema = noArray(
  v.looseObject({
    file_id: fileId,
    attributes: v.nullish(attributesSchema),
    chunking_strategy: v.nullish(chunkingSchema),
  }),
);

/** `POST /vector_stores/{id}/files/{file_id}`: only the attributes change. */
export const updateFileSchema = noArray(v.looseObject({ attributes: attributesSchema }));

/** `POST /vector_stores/{id}/file_batches`: `file_ids`, or `files` with their own attributes. */
export const batchSchema = v.pipe(
  noArray(
    v.looseObject({
      file_ids: v.nullish(v.pipe(v.array(fileId), v.minLength(1), v.maxLength(500))),
      files: v.nullish(
        v.pipe(
          v.array(
            noArray(
              v.looseObject({
                file_id: fileId,
                attributes: v.nullish(attributesSchema),
                chunking_strategy: v.nullish(chunkingSchema),
              }),
            ),
          ),
          v.minLength(1),
          v.maxLength(500),
        ),
      ),
      attributes: v.nullish(attributesSchema),
      chunking_strategy: v.nullish(chunkingSchema),
    }),
  ),
  v.forward(
    v.check(
      (b) => (b.file_ids == null) !== (b.files == null),
      'give either file_ids or files, not both or neither.',
    ),
    ['file_ids'],
  ),
);
