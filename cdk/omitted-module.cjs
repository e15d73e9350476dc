'use strict';

/**
 * What the Lambda bundles hold in place of the packages that only Bolt's Express, HTTP and Socket Mode receivers
 * and its OAuth installer use (the list is OMITTED_PACKAGES in cdk/bundling.ts). The Slack function runs Bolt's
 * AwsLambdaReceiver, so none of them is ever called; Bolt still loads the other receivers' modules at start, so this
 * stand-in must load and be read from quietly, and fail loudly only when something calls or constructs it.
 */

class OmittedModuleError extends Error {
  constructor() {
    super(
      'This package is left out of the calmops Lambda bundles (see OMITTED_PACKAGES in cdk/bundling.ts): only ' +
        "Bolt's Express, HTTP and Socket Mode receivers and its OAuth installer use it, and the functions run " +
        'AwsLambdaReceiver. Remove it from OMITTED_PACKAGES to bundle it again.',
    );
    this.name = 'OmittedModuleError';
  }
}

function omitted() {
  throw new OmittedModuleError();
}

const stub = new Proxy(omitted, {
  get(target, property) {
    // Interop helpers ask whether a module is an ES module; "yes" makes `default` and every named export this stub.
    if (property === '__esModule') return true;
    // Symbols and `then` are how a runtime probes any object (inspection, awaiting it): they must not look callable.
    if (typeof property === 'symbol' || property === 'then') return undefined;
    if (property === 'prototype') return target.prototype;
    return stub;
  },
  apply: omitted,
  construct: omitted,
});

module.exports = stub;
