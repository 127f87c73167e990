/** Types of parse-prometheus-text-format (a devDependency without its own): the /metrics tests' parser. */
declare module "parse-prometheus-text-format" {
  export interface PrometheusSample {
    labels?: Record<string, string>;
    value?: string;
    buckets?: Record<string, string>;
    count?: string;
    sum?: string;
  }
  export interface PrometheusFamily {
    name: string;
    help: string;
    type: "COUNTER" | "GAUGE" | "HISTOGRAM" | "SUMMARY" | "UNTYPED";
    metrics: PrometheusSample[];
  }
  /** Throws InvalidLineError on a line that is not valid text exposition. */
  export default function parsePrometheusTextFormat(text: string): PrometheusFamily[];
}
