/** The model catalogue, made at build time by scripts/catalog-plugin.ts. */
declare module 'virtual:hearth-catalog' {
  const catalog: import('./models/catalog').CatalogEntry[];
  export default catalog;
}
