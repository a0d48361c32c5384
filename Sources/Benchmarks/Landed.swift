import EventGraph

/// The value of a commit that must have landed (a benchmark's setup, which gives no
/// idempotency key): a commit that did not run its closure is a broken setup.
func landed<Value>(_ result: CommitResult<Value>) throws -> Value {
  guard let value = result.value else {
    throw BaselineError(workload: "setup", message: "a setup commit did not run its closure")
  }
  return value
}
