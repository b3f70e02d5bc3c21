// A .ttf imported by the Worker is a "Data" module (wrangler.toml [[rules]]): its bytes as an ArrayBuffer.
declare module "*.ttf" {
	const data: ArrayBuffer;
	export default data;
}
