// The app for the real-model test: built with the model's catalogue entry, and serving the
// model's files from HEARTH_MODEL_DIR when it is set.
import { preview } from 'vite';
import { buildForRealModel, modelFiles, realModel } from '../../scripts/real-model.mjs';

const model = await realModel();
await buildForRealModel(model, 'dist-real-model');
await preview({ logLevel: 'warn', plugins: [modelFiles(model)] });
console.log(`serving ${model.id}${model.dir ? ` from ${model.dir}` : ' (files from the network)'}`);
