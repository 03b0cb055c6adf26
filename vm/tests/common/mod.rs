//! Shared by the VM's integration tests.

use codemode_vm::{Data, Host, HostCall};

/// A host for programs that call no capabilities: any call fails.
pub struct NoHost;

impl Host for NoHost {
    type Error = ();
    fn call(&self, _call: HostCall<'_>) -> Result<Data, ()> {
        Err(())
    }
}
