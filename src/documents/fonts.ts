/**
 * Inter, bundled with the Worker as binary modules: wrangler.toml's [[rules]] makes `.ttf` imports "Data"
 * (an ArrayBuffer), for `wrangler deploy`/`dev` and, through the same config, for the Workers-runtime tests.
 */

import regular from "@expo-google-fonts/inter/400Regular/Inter_400Regular.ttf";
import bold from "@expo-google-fonts/inter/600SemiBold/Inter_600SemiBold.ttf";
import type { InvoiceFonts } from "./invoice-pdf";

export const interFonts: InvoiceFonts = { regular, bold };
