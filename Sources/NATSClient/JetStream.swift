internal import CNATS
import Foundation

/// JetStream on a ``NATSConnection``: streams, fenced publishes and reads by sequence.
///
/// Every call blocks until the server answers or `timeout` passes.
public final class JetStream: @unchecked Sendable {
  // Safety of @unchecked Sendable: nats.c's JetStream context is safe to share between
  // threads; it is created once in init and destroyed once in deinit.
  let context: OpaquePointer
  /// Keeps the connection open while the context lives.
  public let connection: NATSConnection

  /// - Parameter timeout: how long a request waits for its answer, in seconds.
  public init(_ connection: NATSConnection, timeout: Double = 5) throws(NATSError) {
    self.connection = connection
    var options = jsOptions()
    jsOptions_Init(&options)
    options.Wait = Int64(timeout * 1000)
    var js: OpaquePointer?
    try check(natsConnection_JetStream(&js, connection.pointer, &options), doing: "opening JetStream")
    guard let js else { throw NATSError(NATS_ERR, doing: "opening JetStream") }
    self.context = js
  }

  deinit { jsCtx_Destroy(context) }

  // MARK: - Streams

  /// The stream `name`'s configuration and state; `nil` when there is none.
  public func streamInfo(_ name: String) throws(NATSError) -> StreamState? {
    var info: UnsafeMutablePointer<jsStreamInfo>?
    var code = jsErrCode(rawValue: 0)
    let status = js_GetStreamInfo(&info, context, name, nil, &code)
    if status == NATS_NOT_FOUND || code == JSStreamNotFoundErr { return nil }
    try check(status, code, doing: "reading stream '\(name)'")
    guard let info else { return nil }
    defer { jsStreamInfo_Destroy(info) }
    return StreamState(info.pointee)
  }

  /// Creates the stream `name` (file storage), or returns it as it is when it exists.
  ///
  /// - Parameters:
  ///   - replicas: how many servers keep it; a publish is acknowledged once a majority
  ///     stored it.
  ///   - duplicateWindow: how long message IDs are remembered for deduplication, in seconds.
  public func addStream(name: String, subjects: [String], replicas: Int, duplicateWindow: Double) throws(NATSError)
    -> StreamState
  {
    if let existing = try streamInfo(name) { return existing }
    var config = jsStreamConfig()
    jsStreamConfig_Init(&config)
    config.Storage = js_FileStorage
    config.Replicas = Int64(replicas)
    config.Duplicates = Int64(duplicateWindow * 1_000_000_000)
    // Direct gets answer "the first message at or after a sequence" (``nextMessage``),
    // which a reader meeting a purged range needs.
    config.AllowDirect = true
    let copies = subjects.map { strdup($0) }
    defer { copies.forEach { free($0) } }
    var subjectPointers: [UnsafePointer<CChar>?] = copies.map { UnsafePointer($0) }
    var info: UnsafeMutablePointer<jsStreamInfo>?
    var code = jsErrCode(rawValue: 0)
    // The name and subjects' C strings outlive the call, which copies the configuration.
    let status = name.withCString { cName in
      subjectPointers.withUnsafeMutableBufferPointer { buffer in
        config.Name = cName
        config.Subjects = buffer.baseAddress
        config.SubjectsLen = Int32(buffer.count)
        return js_AddStream(&info, context, &config, nil, &code)
      }
    }
    try check(status, code, doing: "creating stream '\(name)'")
    guard let info else { throw NATSError(NATS_ERR, doing: "creating stream '\(name)'") }
    defer { jsStreamInfo_Destroy(info) }
    return StreamState(info.pointee)
  }

  /// Lets the stream `name` answer direct gets (``nextMessage(stream:from:subject:)``), for a
  /// stream created without them; does nothing when it does already.
  public func allowDirectGets(_ name: String) throws(NATSError) {
    var info: UnsafeMutablePointer<jsStreamInfo>?
    var code = jsErrCode(rawValue: 0)
    try check(js_GetStreamInfo(&info, context, name, nil, &code), code, doing: "reading stream '\(name)'")
    guard let info else { return }
    defer { jsStreamInfo_Destroy(info) }
    guard let config = info.pointee.Config, !config.pointee.AllowDirect else { return }
    // The configuration read is sent back with one change; nats.c copies it into the request.
    config.pointee.AllowDirect = true
    var updated: UnsafeMutablePointer<jsStreamInfo>?
    try check(js_UpdateStream(&updated, context, config, nil, &code), code, doing: "updating stream '\(name)'")
    if let updated { jsStreamInfo_Destroy(updated) }
  }

  /// Removes the messages on `subject` (wildcards allowed) before `sequence` from stream
  /// `name`.
  public func purge(_ name: String, subject: String, before sequence: UInt64) throws(NATSError) {
    var options = jsOptions()
    jsOptions_Init(&options)
    var code = jsErrCode(rawValue: 0)
    // The subject's C string lives through the call.
    let status = subject.withCString { cSubject in
      options.Stream.Purge.Subject = cSubject
      options.Stream.Purge.Sequence = sequence
      return js_PurgeStream(context, name, &options, &code)
    }
    try check(status, code, doing: "purging \(subject) before \(sequence) from stream '\(name)'")
  }

  /// Deletes the stream `name` (tests, and a user starting over).
  public func deleteStream(_ name: String) throws(NATSError) {
    var code = jsErrCode(rawValue: 0)
    try check(js_DeleteStream(context, name, nil, &code), code, doing: "deleting stream '\(name)'")
  }

  // MARK: - Publishing

  /// Publishes `message` and waits until the stream has stored it on a majority of its
  /// replicas.
  ///
  /// - Parameters:
  ///   - expectLastSequence: refuse unless the stream's last message is this one
  ///     (``NATSError/isWrongLastSequence``): the fence that keeps one writer.
  ///   - expectNoMessage: refuse unless the stream has no message on this subject yet.
  public func publish(
    _ message: OutgoingMessage, expectLastSequence: UInt64? = nil, expectNoMessage: Bool = false
  ) throws(NATSError) -> PublishAck {
    var msg: OpaquePointer?
    let created = message.data.withUnsafeBufferPointer { bytes in
      bytes.withMemoryRebound(to: CChar.self) { chars in
        natsMsg_Create(&msg, message.subject, nil, chars.baseAddress, Int32(chars.count))
      }
    }
    try check(created, doing: "making a message for \(message.subject)")
    guard let msg else { throw NATSError(NATS_NO_MEMORY, doing: "making a message") }
    defer { natsMsg_Destroy(msg) }
    for (key, value) in message.headers {
      try check(natsMsgHeader_Set(msg, key, value), doing: "setting header \(key)")
    }
    var options = jsPubOptions()
    jsPubOptions_Init(&options)
    if let expectLastSequence { options.ExpectLastSeq = expectLastSequence }
    options.ExpectNoMessage = expectNoMessage
    var ack: UnsafeMutablePointer<jsPubAck>?
    var code = jsErrCode(rawValue: 0)
    // The ID's C string lives through the call.
    let status = message.id.withCString { id in
      options.MsgId = id
      return js_PublishMsg(&ack, context, msg, &options, &code)
    }
    try check(status, code, doing: "publishing \(message.id) to \(message.subject)")
    guard let ack else { throw NATSError(NATS_ERR, doing: "publishing \(message.id): no acknowledgement") }
    defer { jsPubAck_Destroy(ack) }
    return PublishAck(sequence: ack.pointee.Sequence, duplicate: ack.pointee.Duplicate)
  }

  // MARK: - Reading

  /// The message at `sequence` of stream `stream`; `nil` when there is none (not yet, or
  /// deleted).
  public func message(stream: String, sequence: UInt64) throws(NATSError) -> StoredMessage? {
    try stored(doing: "reading message \(sequence) of stream '\(stream)'") { msg, code in
      js_GetMsg(&msg, context, stream, sequence, nil, &code)
    }
  }

  /// The last message on `subject` in stream `stream`; `nil` when there is none.
  public func lastMessage(stream: String, subject: String) throws(NATSError) -> StoredMessage? {
    try stored(doing: "reading the last message on \(subject) of stream '\(stream)'") { msg, code in
      js_GetLastMsg(&msg, context, stream, subject, nil, &code)
    }
  }

  /// The first message on `subject` (wildcards allowed) at or after `sequence` of stream
  /// `stream`, by a direct get; `nil` when there is none.
  ///
  /// The stream must allow direct gets (``allowDirectGets(_:)``; streams that
  /// ``addStream(name:subjects:replicas:duplicateWindow:)`` creates do).
  public func nextMessage(stream: String, from sequence: UInt64, subject: String) throws(NATSError)
    -> StoredMessage?
  {
    // The subject's C string lives through the call.
    let outcome = subject.withCString { cSubject in
      Result { () throws(NATSError) -> StoredMessage? in
        var options = jsDirectGetMsgOptions()
        jsDirectGetMsgOptions_Init(&options)
        options.Sequence = sequence
        options.NextBySubject = cSubject
        return try stored(doing: "reading the message after \(sequence) on \(subject) of stream '\(stream)'") {
          msg, _ in js_DirectGetMsg(&msg, context, stream, nil, &options)
        }
      }
    }
    var found = try outcome.get()
    // A direct get's answer carries its sequence in a header.
    if let f = found, f.sequence == 0, let s = f.headers["Nats-Sequence"].flatMap(UInt64.init) {
      found = StoredMessage(subject: f.subject, sequence: s, headers: f.headers, data: f.data)
    }
    return found
  }

  /// A message that `get` reads from a stream, copied; `nil` when the stream has none.
  private func stored(
    doing what: String, _ get: (inout OpaquePointer?, inout jsErrCode) -> natsStatus
  ) throws(NATSError) -> StoredMessage? {
    var msg: OpaquePointer?
    var code = jsErrCode(rawValue: 0)
    let status = get(&msg, &code)
    if status == NATS_NOT_FOUND || code == JSNoMessageFoundErr { return nil }
    try check(status, code, doing: what)
    guard let msg else { return nil }
    defer { natsMsg_Destroy(msg) }
    return StoredMessage(copying: msg, sequence: natsMsg_GetSequence(msg))
  }
}

extension StreamState {
  init(_ info: jsStreamInfo) {
    var subjects: [String] = []
    var name = ""
    var replicas = 0
    if let config = info.Config?.pointee {
      name = config.Name.map { String(cString: $0) } ?? ""
      replicas = Int(config.Replicas)
      if let list = config.Subjects {
        for i in 0..<Int(config.SubjectsLen) { if let s = list[i] { subjects.append(String(cString: s)) } }
      }
    }
    let leader = info.Cluster?.pointee.Leader.map { String(cString: $0) }
    self.init(
      name: name, subjects: subjects, replicas: replicas, messages: info.State.Msgs, lastSequence: info.State.LastSeq,
      leader: leader)
  }
}
