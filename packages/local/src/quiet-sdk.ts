// The AWS SDK warns on every start that it will require Node 22 from 2027. Lambda runs Node 22;
// this machine's Node 20 is a local-only concern, stated in the README, so the local commands mute it.
// Imported first by each command line so it is set before any SDK client exists.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= "true";
