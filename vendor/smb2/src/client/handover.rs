//! One value handed from one task to another, through a slot the connection
//! keeps and reuses.
//!
//! What a request's caller and the connection's tasks pass each other (a
//! response from the receiver task, a frame's outcome from the writer task)
//! went through a `tokio::sync::oneshot` channel each, that is one allocation
//! per request and direction. A [`Handover`] keeps the slots of finished
//! hand-overs and gives them out again, so a connection that has warmed up
//! hands values over without allocating.
//!
//! The halves behave as a oneshot's do: [`SlotSender::send`] gives the value
//! back when the receiver is gone, and a sender dropped without sending closes
//! the slot, which the receiver sees as [`Closed`]. A slot is only reused once
//! both halves are gone (the receiver holds the last reference), so a late
//! sender can never reach the next hand-over.

use std::future::poll_fn;
use std::sync::{Arc, Mutex as StdMutex};
use std::task::{Context, Poll, Waker};

/// The sender went away without sending.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Closed;

/// Why [`SlotReceiver::try_recv`] has no value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TryRecvError {
    /// Not sent yet.
    Empty,
    /// The sender went away without sending.
    Closed,
}

struct State<T> {
    value: Option<T>,
    /// The receiver's task, to wake when the value comes (or never will).
    waker: Option<Waker>,
    /// The sender is gone: it sent, or it was dropped.
    sender_gone: bool,
    receiver_gone: bool,
}

impl<T> State<T> {
    fn new() -> Self {
        State {
            value: None,
            waker: None,
            sender_gone: false,
            receiver_gone: false,
        }
    }
}

struct Slot<T> {
    state: StdMutex<State<T>>,
}

/// The slots a connection keeps for one kind of hand-over.
pub(crate) struct Handover<T> {
    spare: StdMutex<Vec<Arc<Slot<T>>>>,
}

impl<T> Handover<T> {
    /// How many finished slots are kept: enough for the requests usually in
    /// flight at once; more only hold memory until they are needed.
    const KEEP: usize = 64;

    /// With room for every slot it may keep, so that keeping one never grows the
    /// list: more slots can be at rest at once than ever were before, without any
    /// more of them in use.
    pub(crate) fn new() -> Self {
        Handover {
            spare: StdMutex::new(Vec::with_capacity(Self::KEEP)),
        }
    }

    /// A sender and its receiver, over a kept slot when there is one.
    pub(crate) fn pair(&self) -> (SlotSender<T>, SlotReceiver<T>) {
        let slot = self.spare.lock().unwrap().pop().unwrap_or_else(|| {
            Arc::new(Slot {
                state: StdMutex::new(State::new()),
            })
        });
        (
            SlotSender {
                slot: Some(Arc::clone(&slot)),
            },
            SlotReceiver { slot: Some(slot) },
        )
    }

    /// Done with `rx`: its slot is kept for a later [`pair`](Self::pair) if
    /// nothing else holds it any more (a sender that has not let go yet
    /// leaves it to be freed). `rx` receives nothing afterwards.
    pub(crate) fn recycle(&self, rx: &mut SlotReceiver<T>) {
        let Some(mut slot) = rx.slot.take() else {
            return;
        };
        match Arc::get_mut(&mut slot) {
            Some(only) => {
                let state = only.state.get_mut().unwrap_or_else(|e| e.into_inner());
                *state = State::new();
            }
            None => {
                // The sender still holds it: it must find the receiver gone.
                rx.slot = Some(slot);
                return;
            }
        }
        let mut spare = self.spare.lock().unwrap();
        if spare.len() < Self::KEEP {
            spare.push(slot);
        }
    }
}

/// The sending half of a hand-over.
pub(crate) struct SlotSender<T> {
    slot: Option<Arc<Slot<T>>>,
}

impl<T> SlotSender<T> {
    /// Hands `value` over and wakes the receiver; `Err(value)` when the
    /// receiver is gone.
    pub(crate) fn send(mut self, value: T) -> Result<(), T> {
        let slot = self.slot.take().expect("a sender sends once");
        let waker = {
            let mut state = slot.state.lock().unwrap();
            state.sender_gone = true;
            if state.receiver_gone {
                return Err(value);
            }
            state.value = Some(value);
            state.waker.take()
        };
        drop(slot);
        if let Some(w) = waker {
            w.wake();
        }
        Ok(())
    }
}

impl<T> Drop for SlotSender<T> {
    fn drop(&mut self) {
        let Some(slot) = self.slot.take() else {
            return;
        };
        let waker = {
            let mut state = slot.state.lock().unwrap_or_else(|e| e.into_inner());
            state.sender_gone = true;
            state.waker.take()
        };
        drop(slot);
        if let Some(w) = waker {
            w.wake();
        }
    }
}

/// The receiving half of a hand-over.
pub(crate) struct SlotReceiver<T> {
    slot: Option<Arc<Slot<T>>>,
}

impl<T> SlotReceiver<T> {
    fn poll_recv(&mut self, cx: &mut Context<'_>) -> Poll<Result<T, Closed>> {
        let Some(slot) = &self.slot else {
            return Poll::Ready(Err(Closed));
        };
        let mut state = slot.state.lock().unwrap();
        if let Some(value) = state.value.take() {
            return Poll::Ready(Ok(value));
        }
        if state.sender_gone {
            return Poll::Ready(Err(Closed));
        }
        match &mut state.waker {
            Some(w) if w.will_wake(cx.waker()) => {}
            w => *w = Some(cx.waker().clone()),
        }
        Poll::Pending
    }

    /// Waits for the value. Cancel-safe: a value sent while this future was
    /// dropped waits in the slot for the next call.
    pub(crate) async fn recv(&mut self) -> Result<T, Closed> {
        poll_fn(|cx| self.poll_recv(cx)).await
    }

    /// The value, if it has been sent, without waiting.
    pub(crate) fn try_recv(&mut self) -> Result<T, TryRecvError> {
        let Some(slot) = &self.slot else {
            return Err(TryRecvError::Closed);
        };
        let mut state = slot.state.lock().unwrap();
        match state.value.take() {
            Some(value) => Ok(value),
            None if state.sender_gone => Err(TryRecvError::Closed),
            None => Err(TryRecvError::Empty),
        }
    }
}

impl<T> Drop for SlotReceiver<T> {
    fn drop(&mut self) {
        if let Some(slot) = self.slot.take() {
            let mut state = slot.state.lock().unwrap_or_else(|e| e.into_inner());
            state.receiver_gone = true;
            // A value already sent goes with the slot.
            state.value = None;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_value_is_handed_over_and_the_slot_reused() {
        let h = Handover::<u32>::new();
        let (tx, mut rx) = h.pair();
        let task = tokio::spawn(async move { tx.send(7) });
        assert_eq!(rx.recv().await, Ok(7));
        assert_eq!(task.await.unwrap(), Ok(()));
        h.recycle(&mut rx);
        assert_eq!(h.spare.lock().unwrap().len(), 1);
        // The slot comes back empty and open.
        let (tx, mut rx) = h.pair();
        assert!(h.spare.lock().unwrap().is_empty());
        assert_eq!(rx.try_recv(), Err(TryRecvError::Empty));
        tx.send(8).unwrap();
        assert_eq!(rx.try_recv(), Ok(8));
    }

    #[tokio::test]
    async fn a_dropped_sender_closes_and_a_dropped_receiver_refuses() {
        let h = Handover::<u32>::new();
        let (tx, mut rx) = h.pair();
        drop(tx);
        assert_eq!(rx.recv().await, Err(Closed));
        assert_eq!(rx.try_recv(), Err(TryRecvError::Closed));
        let (tx, rx) = h.pair();
        drop(rx);
        assert_eq!(tx.send(9), Err(9));
        // A sender dropped while the receiver waits wakes it.
        let (tx, mut rx) = h.pair();
        let waiting = tokio::spawn(async move { rx.recv().await });
        tokio::task::yield_now().await;
        drop(tx);
        assert_eq!(waiting.await.unwrap(), Err(Closed));
    }

    #[test]
    fn a_slot_a_sender_still_holds_is_not_reused() {
        let h = Handover::<u32>::new();
        let (tx, mut rx) = h.pair();
        h.recycle(&mut rx);
        assert!(h.spare.lock().unwrap().is_empty());
        // The receiver still counts as there, until it is dropped.
        drop(rx);
        assert_eq!(tx.send(1), Err(1));
        assert!(h.spare.lock().unwrap().is_empty());
    }
}
