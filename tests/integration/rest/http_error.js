// An error the test REST catalog (server.js) answers with its status and the protocol's
// ErrorModel.
'use strict';

class HttpError extends Error {
  constructor(code, type, message) {
    super(message);
    this.code = code;
    this.type = type;
  }
}

function errorBody(e) {
  return { error: { message: e.message, type: e.type, code: e.code } };
}

module.exports = { HttpError, errorBody };
