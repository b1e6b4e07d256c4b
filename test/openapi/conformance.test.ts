// The conformance suite (conformance.ts) against the app itself, responses checked with ajv.
import "./conformance";
